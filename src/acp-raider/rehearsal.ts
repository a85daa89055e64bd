/**
 * A warm bridge's rehearsal (docs/agents.md, "Warm bridges"): before it says
 * it is ready, the bridge plays one prompt turn against an agent of its own,
 * in this process, over in-memory streams, the way a run's turn goes (the
 * client, the line reader, the turn's updates, the connection's end). A
 * bridge lives for one run: whatever the turn uses, V8 compiles on its first
 * use, and Node loads the web streams it sits on. Rehearsed, a run handed
 * over does not wait for that on its way to its first update and its end.
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { agent, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { AgentLines } from './agent-lines.js';
import { silentSink } from './event-stream.js';
import { TurnUpdates } from './turn-updates.js';

const SESSION = 'rehearsal';

export async function rehearseTurn(): Promise<void> {
  const toAgent = new PassThrough();
  const fromAgent = new PassThrough();
  agent({ name: 'rehearsal' })
    .onRequest(methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
    .onRequest(methods.agent.session.new, () => ({ sessionId: SESSION }))
    .onRequest(methods.agent.session.prompt, async ({ client: bridge }) => {
      await bridge.notify(methods.client.session.update, {
        sessionId: SESSION,
        update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'ready' } },
      });
      return { stopReason: 'end_turn' as const };
    })
    .connect(ndJsonStream(Writable.toWeb(fromAgent) as WritableStream<Uint8Array>, Readable.toWeb(toAgent) as ReadableStream<Uint8Array>));
  const updates = new TurnUpdates(silentSink);
  const conn = client({ name: 'raider-hall' })
    .onNotification(methods.client.session.update, ({ params }) => updates.apply(params.update))
    .connect(ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, new AgentLines(fromAgent).readable));
  try {
    await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await conn.agent.request(methods.agent.session.new, { cwd: '/', mcpServers: [] });
    await conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: SESSION }] });
  } finally {
    conn.close();
    toAgent.destroy();
    fromAgent.destroy();
  }
}
