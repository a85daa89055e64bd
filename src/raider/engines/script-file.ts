/**
 * The scripted engine's script: where it is and what it may contain.
 *
 * Format (YAML):
 *
 *   replies:                       # tried in order; the first that matches wins
 *     - match: "hello|hi"          # optional regex, case-insensitive, tested
 *                                  # against the mission; no match = matches all
 *       steps:                     # played in order for that mission
 *         - tool: list_dir         # ask for a tool call (one tool round);
 *           arguments: {path: .}   #   the agent loop runs the real tool
 *         - sleep: 0.5             # think for 0.5 s (cancellable by a signal)
 *         - message: "Hi {{mission}}"   # the final answer; ends the run
 *         - fail: "text"           # the engine fails; the run fails (exit 1)
 *
 * Templates in message, fail and string tool arguments: `{{mission}}` is
 * the current mission, `{{turn}}` the number of user turns in the
 * conversation (1 in a fresh session, 2 in the first resumed run, ...).
 *
 * Location: `-o script=FILE`, else $RAIDER_SCRIPT, else
 * `<root>/.raider/script.yml`; a relative path is taken from the root.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '../errors.js';
import { firstIssue } from '../config/yaml-file.js';
import { errorCode } from '../../domain/error-message.js';

export type ScriptStep = { tool: string; arguments: Record<string, unknown> } | { sleep: number } | { message: string } | { fail: string };

export interface ScriptReply {
  match: RegExp | undefined;
  steps: ScriptStep[];
}

export interface Script {
  file: string;
  replies: ScriptReply[];
}

const stepSchema = z.union([
  z.strictObject({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ sleep: z.number().nonnegative() }),
  z.strictObject({ message: z.string() }),
  z.strictObject({ fail: z.string() }),
]);

const scriptSchema = z.strictObject({
  replies: z
    .array(
      z.strictObject({
        match: z.string().optional(),
        steps: z.array(stepSchema).min(1),
      }),
    )
    .min(1),
});

const STEP_HINT = 'a step is one of {tool, arguments?}, {sleep: SECONDS}, {message: TEXT}, {fail: TEXT}';

/** Where the script is, by the precedence documented above. */
export function scriptPath(root: string, option: string | undefined, env: NodeJS.ProcessEnv): string {
  const chosen = option ?? (env.RAIDER_SCRIPT || undefined);
  if (chosen === undefined) return join(root, '.raider', 'script.yml');
  return isAbsolute(chosen) ? chosen : resolve(root, chosen);
}

/** Read and check a script; every problem is a ConfigError naming the file. */
export function loadScript(file: string): Script {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = errorCode(err);
    throw new ConfigError(
      code === 'ENOENT'
        ? `scripted engine: script ${file} not found (give one with -o script=FILE or RAIDER_SCRIPT)`
        : `scripted engine: cannot read script ${file}: ${errorMessage(err)}`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`scripted engine: script ${file} is not valid YAML: ${errorMessage(err)}`);
  }
  const parsed = scriptSchema.safeParse(data);
  if (!parsed.success) {
    const { where, issue } = firstIssue(parsed.error, '(top)');
    const what = issue?.code === 'invalid_union' ? STEP_HINT : (issue?.message ?? 'does not match the script format');
    throw new ConfigError(`scripted engine: script ${file}: ${where}: ${what}`);
  }
  const replies = parsed.data.replies.map((reply, i): ScriptReply => {
    let match: RegExp | undefined;
    if (reply.match !== undefined) {
      try {
        match = new RegExp(reply.match, 'i');
      } catch (err) {
        throw new ConfigError(`scripted engine: script ${file}: replies[${i}].match: ${errorMessage(err)}`);
      }
    }
    const steps = reply.steps.map((s): ScriptStep => ('tool' in s ? { tool: s.tool, arguments: s.arguments ?? {} } : s));
    return { match, steps };
  });
  return { file, replies };
}
