/**
 * The permission policy: for one tool call, allow, deny or ask — and why.
 *
 * In this order:
 *   1. a deny rule refuses (in every mode, bypassPermissions included);
 *   2. plan mode refuses anything that is not reading;
 *   3. bypassPermissions allows;
 *   4. an ask rule asks;
 *   5. an allow rule (or one granted for this session) allows;
 *   6. else the mode decides by what the call does:
 *
 *      | call does | default | acceptEdits | plan   | auto  | bypassPermissions |
 *      |-----------|---------|-------------|--------|-------|-------------------|
 *      | read      | allow   | allow       | allow  | allow | allow             |
 *      | edit      | ask     | allow       | refuse | allow | allow             |
 *      | execute   | ask     | ask         | refuse | allow | allow             |
 *      | network   | ask     | ask         | refuse | allow | allow             |
 *      | reply     | allow   | allow       | allow  | allow | allow             |
 *
 * `auto` decides without asking (only ask rules still ask), which is what a
 * hall raider with nobody to ask wants; `bypassPermissions` also skips ask
 * rules. "Ask" becomes a refusal where there is nobody to ask.
 */
import type { PermissionMode } from '../../domain/permission.js';
import type { AccessCategory } from '../tools/tool.js';
import { ruleMatches, type CallFacts, type MatchContext, type Rule } from './rules.js';

export interface RuleSet {
  allow: readonly Rule[];
  deny: readonly Rule[];
  ask: readonly Rule[];
}

export interface Decision {
  verdict: 'allow' | 'deny' | 'ask';
  reason: string;
}

const WHAT: Record<AccessCategory, string> = {
  read: 'reading',
  edit: 'writing files',
  execute: 'running commands',
  network: 'using the network',
  reply: 'replying to the chat',
};

const MODE_TABLE: Record<PermissionMode, Record<AccessCategory, Decision['verdict']>> = {
  default: { read: 'allow', edit: 'ask', execute: 'ask', network: 'ask', reply: 'allow' },
  acceptEdits: { read: 'allow', edit: 'allow', execute: 'ask', network: 'ask', reply: 'allow' },
  plan: { read: 'allow', edit: 'deny', execute: 'deny', network: 'deny', reply: 'allow' },
  auto: { read: 'allow', edit: 'allow', execute: 'allow', network: 'allow', reply: 'allow' },
  bypassPermissions: { read: 'allow', edit: 'allow', execute: 'allow', network: 'allow', reply: 'allow' },
};

function named(rule: Rule): string {
  return `${rule.text} (${rule.source})`;
}

export function decide(mode: PermissionMode, rules: RuleSet, call: CallFacts, ctx: MatchContext): Decision {
  const { category } = call.access;
  const deny = rules.deny.find((r) => ruleMatches(r, call, ctx, 'refuse'));
  if (deny) return { verdict: 'deny', reason: `denied by the rule ${named(deny)}` };
  if (mode === 'plan' && MODE_TABLE.plan[category] === 'deny') {
    return { verdict: 'deny', reason: `plan mode allows no ${WHAT[category]}; it only looks and plans` };
  }
  if (mode === 'bypassPermissions') return { verdict: 'allow', reason: 'bypassPermissions mode' };
  const ask = rules.ask.find((r) => ruleMatches(r, call, ctx, 'refuse'));
  if (ask) return { verdict: 'ask', reason: `the rule ${named(ask)} asks before this` };
  const allow = rules.allow.find((r) => ruleMatches(r, call, ctx, 'allow'));
  if (allow) return { verdict: 'allow', reason: `allowed by the rule ${named(allow)}` };
  const verdict = MODE_TABLE[mode][category];
  if (verdict === 'allow') return { verdict, reason: `${mode} mode allows ${WHAT[category]}` };
  return { verdict, reason: `${mode} mode asks before ${WHAT[category]} unless a rule allows it` };
}
