/**
 * What a chat's commands do to its binding and what they answer: `/new`
 * resets the session, `/status` shows the running run and how many missions
 * wait, `/cancel` cancels the running run as the socket's `cancel` does (the
 * run escalates from SIGINT itself), `/queue` lists what waits, in order.
 */
import type { Mission } from '../../domain/mission.js';
import {
  type ChatCommand,
  type ChatRun,
  cancelFailedText,
  cancellingText,
  NOTHING_TO_CANCEL_TEXT,
  queueText,
  statusText,
} from '../../domain/telegram-commands.js';
import { NEW_SESSION_TEXT } from '../../domain/telegram-routing.js';
import type { HallServices } from '../../ports/hall-services.js';

/** Runs the command for the chat's binding; resolves with the text to send back into the chat. */
export async function answerChatCommand(services: HallServices, command: ChatCommand, binding: string): Promise<string> {
  switch (command) {
    case 'new':
      // No error when nothing is bound: the next message starts a new session either way.
      await services.request({ type: 'cmd.sessionReset', binding });
      return NEW_SESSION_TEXT;
    case 'status':
      return statusText(runningRun(services, binding), waitingMissions(services, binding).length, Date.now());
    case 'queue':
      return queueText(waitingMissions(services, binding));
    case 'cancel': {
      const run = runningRun(services, binding);
      if (run === null) return NOTHING_TO_CANCEL_TEXT;
      const reply = await services.request({ type: 'cmd.cancel', id: run.id });
      return 'error' in reply ? cancelFailedText(run.id, reply.error) : cancellingText(run.id);
    }
  }
}

/** The binding's run on this hall, from the run ledger. */
function runningRun(services: HallServices, binding: string): ChatRun | null {
  for (const run of services.store.state.runs.values()) {
    if (run.binding === binding) return { id: run.id, raider: run.slot, startedAt: run.started_at };
  }
  return null;
}

/** The missions of the binding that wait: in its binding queue first, then in the raiders' queues, each in order. */
function waitingMissions(services: HallServices, binding: string): Mission[] {
  const { bindingQueues, slotQueues } = services.queries.waitingState();
  const waiting = [...(bindingQueues.get(binding) ?? [])];
  for (const queue of slotQueues.values()) waiting.push(...queue.filter((m) => m.binding === binding));
  return waiting;
}
