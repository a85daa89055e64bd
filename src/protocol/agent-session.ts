/**
 * The ACP agent's own session of a hall session, as the hall keeps it in its
 * state store: namespace `acp_agent`, the hall session id as key,
 * `{"v":1,"agent":CMD,"session":AGENT_SESSION_ID}` as value. The ACP bridge
 * says in its run document which agent session its prompt went to
 * (`agent_session {id, agent}`); the hall records it as the run ends, through
 * its store like every durable write (files or PostgreSQL), and gives it to
 * the binding's next run as `--agent-session`, on whichever hall of a shared
 * cluster that run starts (docs/agents.md, "Sessions across runs"). A
 * `session reset` drops it with the binding's session.
 */
import { z } from 'zod';

export const AGENT_SESSIONS_NS = 'acp_agent';

export const AgentSessionRecord = z.object({ v: z.literal(1), agent: z.string(), session: z.string().min(1) });
export type AgentSessionRecord = z.infer<typeof AgentSessionRecord>;

/** The agent session a record holds, when the same agent command opened it; another agent's, or no record, is undefined. */
export function agentSessionOf(value: unknown, agent: string): string | undefined {
  const parsed = AgentSessionRecord.safeParse(value);
  return parsed.success && parsed.data.agent === agent ? parsed.data.session : undefined;
}
