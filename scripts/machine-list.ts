/** The machines the docs and the dashboard draw, with a line about each (scripts/charts.ts, scripts/statechart-svg.ts). */
import type { AnyStateMachine } from 'xstate';
import { acpSessionMachine } from '../src/machines/acp-session.machine.js';
import { bindingQueueMachine } from '../src/machines/binding-queue.machine.js';
import { cronJobMachine } from '../src/machines/cron-job.machine.js';
import { hallMachine } from '../src/machines/hall.machine.js';
import { permissionQuestionMachine } from '../src/machines/permission-question.machine.js';
import { runMachine } from '../src/machines/run.machine.js';
import { slotMachine } from '../src/machines/slot.machine.js';
import { warmSpareMachine } from '../src/machines/warm-spare.machine.js';

/** [docs name, what it is, the machine]; the dashboard names each chart by the machine's id. */
export const MACHINES: ReadonlyArray<readonly [string, string, AnyStateMachine]> = [
  ['run', 'A raider run: from admission through the cancel escalation to its reported end.', runMachine],
  ['slot', 'A slot: plain names run in parallel, numbered names one at a time with a FIFO queue.', slotMachine],
  ['binding-queue', 'A binding queue: one writer per session, missions wait while the binding is held.', bindingQueueMachine],
  ['hall', 'The hall root actor: owns slots and binding queues, answers commands.', hallMachine],
  ['acp-session', 'An ACP session: prompts become missions of binding acp:SESSION.', acpSessionMachine],
  ['permission-question', 'A permission question put to the ACP client.', permissionQuestionMachine],
  ['cron-job', 'A cron job: sleeps until its next time, fires, records it.', cronJobMachine],
  ['warm-spare', 'A warm ACP bridge: started ahead, ready, taken by a run, handed it, or ended unused.', warmSpareMachine],
];
