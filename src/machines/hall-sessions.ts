/** Session binding: which raider session each binding continues, as operators and ACP set it. */
import { ownEntry as own } from '../domain/own-entry.js';
import { AGENT_SESSIONS_NS } from '../protocol/agent-session.js';
import { type EventOf, hallAction } from './hall-context.js';
import type { ReplyBody } from './hall-effects.js';
import { busEffect as bus, replyEffect as reply, storeEffect as store } from './hall-payloads.js';

export const sessionActions = {
  resetSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.sessionReset'>) => {
    const answer = (body: ReplyBody) => {
      if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, body));
    };
    const binding = cmd.binding;
    const old = own(context.sessions, binding);
    if (old === undefined) return answer({ error: `no session bound to ${binding}` });
    const { [binding]: _, ...sessions } = context.sessions;
    enqueue.assign({ sessions });
    enqueue.emit(store({ op: 'unbind', binding }));
    // The agent session of the old one goes with it: the binding's next run starts the agent over too.
    enqueue.emit(store({ op: 'unset', ns: AGENT_SESSIONS_NS, key: old }));
    enqueue.emit(bus({ type: 'session.reset', binding, session: old }));
    answer({ reset: 1, binding, session: old });
  }),

  bindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.bindSession'>) => {
    if (own(context.sessions, cmd.binding) !== cmd.session) {
      enqueue.assign({ sessions: { ...context.sessions, [cmd.binding]: cmd.session } });
      enqueue.emit(store({ op: 'bind', binding: cmd.binding, session: cmd.session }));
      enqueue.emit(bus({ type: 'session.bound', binding: cmd.binding, session: cmd.session }));
    }
    if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { bound: 1, binding: cmd.binding, session: cmd.session }));
  }),

  unbindSession: hallAction(({ context, enqueue }, cmd: EventOf<'cmd.unbindSession'>) => {
    const old = own(context.sessions, cmd.binding);
    if (old !== undefined) {
      const { [cmd.binding]: _, ...sessions } = context.sessions;
      enqueue.assign({ sessions });
      enqueue.emit(store({ op: 'unbind', binding: cmd.binding }));
    }
    if (cmd.reqId !== undefined) enqueue.emit(reply(cmd.reqId, { unbound: old === undefined ? 0 : 1, binding: cmd.binding }));
  }),
};
