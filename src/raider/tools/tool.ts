/**
 * What a tool is to the agent loop. A tool either returns a result (which
 * may say ok:false, e.g. "no such file") or throws; the loop turns a throw
 * into a failed tool result, never into a crashed run.
 */
import type { ToolSpec } from '../engines/engine.js';

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
}

export interface Tool {
  readonly spec: ToolSpec;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool's refusal of its input, reported as a failed result. */
export class ToolError extends Error {}

export function stringArg(args: Record<string, unknown>, key: string, fallback?: string): string {
  const v = args[key] ?? fallback;
  if (typeof v !== 'string' || v === '') throw new ToolError(`argument '${key}' must be a non-empty string`);
  return v;
}
