/**
 * The permission gate the agent loop asks before each tool call: the
 * policy decides; what it would ask about goes to the permission channel
 * when there is one and is refused with the reason otherwise. A `session`
 * answer adds the offered rule for the rest of the session (the journal
 * records it, so a resumed session keeps it). Every question and every
 * refusal is reported as a `permission` event.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { PermissionMode } from '../../domain/permission.js';
import type { ToolCallEntry } from '../engines/engine.js';
import type { Tool } from '../tools/tool.js';
import type { Asker, AnswerWord } from '../../protocol/permission-channel.js';
import { decide, type RuleSet } from './policy.js';
import { parseRule, suggestRule, type CallFacts, type MatchContext, type Rule } from './rules.js';
import { definedFields } from '../../domain/defined-fields.js';

export type GateOutcome = { allowed: true } | { allowed: false; reason: string };

/** The stream's and the journal's `permission` event. */
export interface PermissionEvent {
  call: string;
  name: string;
  decision: 'allowed' | 'refused';
  /** True when the question went to the permission channel. */
  asked: boolean;
  answer?: AnswerWord;
  reason: string;
  rule?: string;
}

export interface ToolGate {
  check(call: ToolCallEntry, tool: Tool, signal: AbortSignal): Promise<GateOutcome>;
}

export interface GateOptions {
  mode: PermissionMode;
  rules: RuleSet;
  /** Rules granted for this session before this run (from the journal). */
  sessionRules: readonly string[];
  ctx: MatchContext;
  asker: Asker | undefined;
  onEvent: (event: PermissionEvent) => void;
}

export const SESSION_SOURCE = 'granted for this session';

export class PermissionGate implements ToolGate {
  private readonly sessionAllow: Rule[];

  constructor(private readonly opts: GateOptions) {
    this.sessionAllow = opts.sessionRules.map((t) => parseRule(t, SESSION_SOURCE));
  }

  async check(call: ToolCallEntry, tool: Tool, signal: AbortSignal): Promise<GateOutcome> {
    const facts = await this.facts(call, tool);
    const { rules, ctx, mode } = this.opts;
    const decision = decide(mode, { ...rules, allow: [...rules.allow, ...this.sessionAllow] }, facts, ctx);
    const rule = suggestRule(facts, ctx);
    const base = { call: call.id, name: call.name, ...definedFields({ rule }) };
    if (decision.verdict === 'allow') return { allowed: true };
    if (decision.verdict === 'deny') return this.refuse({ ...base, decision: 'refused', asked: false, reason: decision.reason });
    if (!this.opts.asker) {
      const reason = `${decision.reason}, and there is nobody to ask (no permission channel)`;
      return this.refuse({ ...base, decision: 'refused', asked: false, reason });
    }
    const question = {
      tool: call.name,
      call: call.id,
      input: call.arguments,
      title: facts.access.title,
      kind: facts.access.kind,
      reason: decision.reason,
      ...definedFields({ rule }),
    };
    const answer = await this.opts.asker.ask(question, signal);
    // A cancel ends the call as cancelled; that is no permission decision to report.
    if (signal.aborted) return { allowed: false, reason: 'the run was cancelled' };
    if (answer.answer === 'no') {
      const reason = `refused when asked${answer.reason ? `: ${answer.reason}` : ''}`;
      return this.refuse({ ...base, decision: 'refused', asked: true, answer: 'no', reason });
    }
    if (answer.answer === 'session' && rule !== undefined) this.sessionAllow.push(parseRule(rule, SESSION_SOURCE));
    this.opts.onEvent({ ...base, decision: 'allowed', asked: true, answer: answer.answer, reason: answer.reason || 'allowed when asked' });
    return { allowed: true };
  }

  private refuse(event: PermissionEvent): GateOutcome {
    this.opts.onEvent(event);
    return { allowed: false, reason: event.reason };
  }

  private async facts(call: ToolCallEntry, tool: Tool): Promise<CallFacts> {
    const access = tool.access(call.arguments);
    const paths: string[] = [];
    if (access.subject?.type === 'path' && access.subject.path !== '') {
      const abs = resolve(this.opts.ctx.root, access.subject.path);
      paths.push(abs);
      try {
        const real = await realpath(abs);
        if (real !== abs) paths.push(real);
      } catch {
        // does not exist yet: the lexical path is all there is
      }
    }
    return { toolName: call.name, access, paths };
  }
}
