/**
 * What a tool is to the agent loop. A tool either returns a result (which
 * may say ok:false, e.g. "no such file") or throws; the loop turns a throw
 * into a failed tool result, never into a crashed run.
 */
import type { ToolSpec } from '../engines/engine.js';
import type { ProcessGroups } from './process-groups.js';

export interface ToolResult {
  ok: boolean;
  /** The full text; the stream cuts it, the journal keeps it whole. */
  content: string;
}

export interface ToolContext {
  /** The absolute project root; file tools must stay inside it. */
  root: string;
  /** Aborted on cancel or interrupt. */
  signal: AbortSignal;
  /** Where tools that start processes register them, so a cancel can end them. */
  processes: ProcessGroups;
  /** The environment for processes a tool starts: the raider's, without API keys. */
  env: NodeJS.ProcessEnv;
}

/**
 * What a call does, for the permission policy: `read` is always allowed
 * unless a rule denies it; `edit`, `execute` and `network` depend on the
 * mode and the rules; `reply` answers the chat the mission came from.
 */
export type AccessCategory = 'read' | 'edit' | 'execute' | 'network' | 'reply';

/** ACP's tool kinds, passed on with a permission question. */
export type ToolKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'other';

export type AccessSubject = { type: 'path'; path: string } | { type: 'command'; command: string };

export interface ToolAccess {
  category: AccessCategory;
  kind: ToolKind;
  /** One line for a person deciding about the call. */
  title: string;
  /** The rule name that covers this call: `Read`, `Edit`, `Bash`, or the tool's own name. */
  family: string;
  /** What a rule's parenthesised part is matched against. */
  subject?: AccessSubject;
}

export interface Tool {
  readonly spec: ToolSpec;
  /** Describe a call for the permission policy; must not throw on bad arguments. */
  access(args: Record<string, unknown>): ToolAccess;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool's refusal of its input, reported as a failed result. */
export class ToolError extends Error {}

export function stringArg(args: Record<string, unknown>, key: string, fallback?: string): string {
  const v = args[key] ?? fallback;
  if (typeof v !== 'string' || v === '') throw new ToolError(`argument '${key}' must be a non-empty string`);
  return v;
}

/** A string argument for a description: never throws. */
export function peekString(args: Record<string, unknown>, key: string, fallback = ''): string {
  const v = args[key];
  return typeof v === 'string' ? v : fallback;
}
