/**
 * Permission rules, in the syntax of Claude Code's settings so one list
 * serves both: `Tool` or `Tool(specifier)`.
 *
 * - `Bash(git status)`: exactly that command; `Bash(npm run *)`: `*` is any
 *   text (a trailing ` *` also matches the bare command); `Bash(npm test:*)`:
 *   the legacy prefix form. A compound line (`a && b`, `a | b`) is allowed
 *   only when every part is; deny and ask rules hit when any part does.
 * - `Read(PATTERN)`, `Edit(PATTERN)` (also `Write(...)`): gitignore-style
 *   globs. `/p` and `p/q` are relative to the project root, `//p` is an
 *   absolute path, `~/p` is under HOME, a pattern without a slash (`*.env`)
 *   matches at any depth; `**` crosses directories.
 * - `Read` (no parentheses) covers every call of that family; so does
 *   `Bash`. Hall tools are named by their tool name (`hall_spawn`) or as
 *   MCP tools (`mcp__raider-hall__hall_spawn`, `mcp__raider-hall`).
 * Rules for tools this raider does not have (`WebFetch(...)`) are kept and
 * never match, so a Claude settings file loads unchanged.
 */
import { join, relative, resolve } from 'node:path';
import picomatch from 'picomatch';
import { ConfigError } from '../errors.js';
import type { ToolAccess } from '../tools/tool.js';
import { splitCommand } from './command-split.js';

export interface Rule {
  /** As written, e.g. `Bash(npm run *)`. */
  text: string;
  tool: string;
  /** The part in parentheses; undefined for a bare tool name (or `Tool()`, `Tool(*)` for commands). */
  spec: string | undefined;
  /** Where it came from, for messages: a file, or `this session`. */
  source: string;
}

const RULE_RE = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s;

export function parseRule(text: string, source: string): Rule {
  const m = RULE_RE.exec(text.trim());
  if (!m || m[1] === undefined)
    throw new ConfigError(`${source}: '${text}' is not a permission rule (want Tool or Tool(specifier), e.g. Bash(git status))`);
  const spec = m[2] === undefined || m[2].trim() === '' ? undefined : m[2].trim();
  return { text: text.trim(), tool: m[1], spec, source };
}

/** What a rule is matched against: the call's tool and its access description. */
export interface CallFacts {
  toolName: string;
  access: ToolAccess;
  /** For path subjects: the absolute path, and its realpath when that differs. */
  paths: string[];
}

export interface MatchContext {
  root: string;
  home: string;
}

const HALL_MCP = 'mcp__raider-hall';

function namesTool(rule: Rule, call: CallFacts): boolean {
  const { tool } = rule;
  if (tool === call.access.family || tool === call.toolName) return true;
  if (tool === 'Write' && call.access.family === 'Edit') return true;
  return tool === HALL_MCP || tool === `${HALL_MCP}__${call.toolName}`;
}

export type MatchPurpose = 'allow' | 'refuse';

/**
 * Does the rule cover the call? `allow` matching is strict (every part of a
 * command line, every path candidate); `refuse` (deny and ask) is liberal,
 * so a deny rule is not dodged by a compound line or a symlink.
 */
export function ruleMatches(rule: Rule, call: CallFacts, ctx: MatchContext, purpose: MatchPurpose): boolean {
  if (!namesTool(rule, call)) return false;
  if (rule.spec === undefined) return true;
  const subject = call.access.subject;
  if (!subject) return false;
  if (subject.type === 'command') return commandMatches(rule.spec, subject.command, purpose);
  return pathMatches(rule.spec, call.paths, ctx, purpose);
}

// ---- commands

function isWildcard(spec: string): boolean {
  return spec.includes('*');
}

function commandRegex(spec: string): RegExp {
  if (spec.endsWith(':*')) return new RegExp(`^${escapeRe(spec.slice(0, -2))}(?:\\s.*)?$`, 's');
  let body = spec;
  let tail = '';
  if (body.endsWith(' *')) {
    body = body.slice(0, -2);
    tail = '(?:\\s.*)?';
  }
  return new RegExp(`^${body.split('*').map(escapeRe).join('.*')}${tail}$`, 's');
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function commandMatches(spec: string, command: string, purpose: MatchPurpose): boolean {
  const line = command.trim();
  if (spec === '*') return true;
  if (!isWildcard(spec) && spec === line) return true;
  const split = splitCommand(line);
  if (split.segments.length === 0) return false;
  const re = isWildcard(spec) ? commandRegex(spec) : undefined;
  const hits = (text: string): boolean => (re ? re.test(text) : text === spec);
  if (purpose === 'allow') {
    // An exact rule may name one opaque part; a wildcard never stretches over one.
    return !split.substitutes && split.segments.every((s) => hits(s.text) && (!s.opaque || !re));
  }
  if (split.segments.some((s) => hits(s.text))) return true;
  // Inside a substitution the parts are not split out: look for the rule's fixed start anywhere.
  const fixed = (spec.endsWith(':*') ? spec.slice(0, -2) : (spec.split('*')[0] ?? '')).trim();
  return split.substitutes && fixed !== '' && line.includes(fixed);
}

// ---- paths

export function patternToAbsolute(spec: string, ctx: MatchContext): string {
  if (spec.startsWith('//')) return spec.slice(1);
  if (spec.startsWith('~/')) return join(ctx.home, spec.slice(2));
  if (spec.startsWith('/')) return join(ctx.root, spec.slice(1));
  let rel = spec.startsWith('./') ? spec.slice(2) : spec;
  // gitignore: a pattern without a slash matches at any depth.
  if (!rel.replace(/\/$/, '').includes('/')) rel = `**/${rel}`;
  return join(ctx.root, rel);
}

function pathMatches(spec: string, paths: readonly string[], ctx: MatchContext, purpose: MatchPurpose): boolean {
  if (paths.length === 0) return false;
  const matcher = picomatch(patternToAbsolute(spec, ctx), { dot: true });
  return purpose === 'allow' ? paths.every((p) => matcher(p)) : paths.some((p) => matcher(p));
}

/**
 * The narrowest rule that names this call, offered with a question so that
 * "yes, for this session" allows exactly it again; undefined when no rule
 * can name it (an empty or multi-line command, a path with glob characters).
 */
export function suggestRule(call: CallFacts, ctx: MatchContext): string | undefined {
  const { access } = call;
  const subject = access.subject;
  if (access.family === 'Bash') {
    const command = subject?.type === 'command' ? subject.command.trim() : '';
    if (!command || command.includes('\n')) return undefined;
    return `Bash(${command})`;
  }
  if (access.family === 'Read' || access.family === 'Edit') {
    if (subject?.type !== 'path' || subject.path === '') return undefined;
    const abs = resolve(ctx.root, subject.path);
    const rel = relative(ctx.root, abs);
    if (rel.startsWith('..') || /[*?[\]{}()!]/.test(abs)) return undefined;
    return `${access.family}(/${rel})`;
  }
  return call.toolName;
}
