/**
 * The ACP agent's own session of a hall session: `<root>/.raider/sessions/<id>.acp.json`,
 * beside the session's journal, `{"v":1,"agent":CMD,"session":AGENT_SESSION_ID}`.
 * The ACP bridge writes it once the agent has opened a session for a bound
 * run, and reads it at the next run of the binding to go on with that
 * session (docs/agents.md, "Sessions across runs"). It lives in the hall
 * root like the journal, so it holds whichever state store the hall keeps,
 * and a `session reset` (a new hall session) leaves it behind.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { errorCode } from '../domain/error-message.js';
import { journalPath } from './session-journal.js';

export const AgentSessionRecord = z.object({ v: z.literal(1), agent: z.string(), session: z.string().min(1) });
export type AgentSessionRecord = z.infer<typeof AgentSessionRecord>;

export function agentSessionPath(root: string, hallSession: string): string {
  return journalPath(root, hallSession).replace(/\.jsonl$/, '.acp.json');
}

/**
 * The agent session recorded for this hall session, when it was opened by
 * the same agent command; a record of another agent, or none, is undefined.
 * A record that cannot be read is an error value, so the run can say so.
 */
export function readAgentSession(
  root: string,
  hallSession: string,
  agent: string,
): { ok: true; session: string | undefined } | { ok: false; error: string } {
  const file = agentSessionPath(root, hallSession);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { ok: true, session: undefined };
    return { ok: false, error: `cannot read ${file}: ${errorCode(err) ?? String(err)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: `${file} is not JSON` };
  }
  const parsed = AgentSessionRecord.safeParse(json);
  if (!parsed.success) return { ok: false, error: `${file} is not an agent session record` };
  return { ok: true, session: parsed.data.agent === agent ? parsed.data.session : undefined };
}

/** Records the agent's session, whole or not at all (a temporary file renamed over the record). */
export function writeAgentSession(root: string, hallSession: string, agent: string, session: string): void {
  const file = agentSessionPath(root, hallSession);
  const record: AgentSessionRecord = { v: 1, agent, session };
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    // On disk before it replaces the old record: a crash leaves the old one or the new one.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
