/**
 * The ACP agent's own session of a hall session, as the hall keeps it in its
 * state store: namespace `acp_agent`, the hall session id as key,
 * `{"v":1,"agent":CMD,"session":AGENT_SESSION_ID,"cost"?:{amount,currency}}`
 * as value. The ACP bridge says in its run document which agent session its
 * prompt went to (`agent_session {id, agent}`) and the session's cost so far
 * (`usage.cost`); the hall records both as the run ends, through its store
 * like every durable write (files or PostgreSQL), and gives them to the
 * binding's next run as `--agent-session` and `--agent-session-cost`, on
 * whichever hall of a shared cluster that run starts (docs/agents.md,
 * "Sessions across runs"), so that run can say its own share of the cost. A
 * `session reset` drops it with the binding's session.
 */
import { z } from 'zod';
import { definedFields } from '../domain/defined-fields.js';
import { Cost } from '../domain/run-usage.js';

export const AGENT_SESSIONS_NS = 'acp_agent';

export const AgentSessionRecord = z.object({
  v: z.literal(1),
  agent: z.string(),
  session: z.string().min(1),
  // A cost that does not read as one is no figure: the next run's share is then its whole cost.
  cost: Cost.optional().catch(undefined),
});
export type AgentSessionRecord = z.infer<typeof AgentSessionRecord>;

/** The agent session a record holds and its cost then, when the same agent command opened it; another agent's, or no record, is undefined. */
export function agentSessionOf(value: unknown, agent: string): { session: string; cost?: Cost } | undefined {
  const parsed = AgentSessionRecord.safeParse(value);
  if (!parsed.success || parsed.data.agent !== agent) return undefined;
  return { session: parsed.data.session, ...definedFields({ cost: parsed.data.cost }) };
}
