/**
 * One ACP session: its prompts, from submitted to answered, and the
 * permission questions of its runs. All prompts of a session run in one
 * raider session (binding `acp:SESSION`), one after another. What to do
 * leaves as emitted effects; the ACP adapter carries them out.
 *
 *   open ──close──▶ closed
 */
import { assign, enqueueActions, setup, type DoneActorEvent } from 'xstate';
import { promptAnswer, type PromptAnswer, type RunEnd } from '../domain/acp-mapping.js';
import { permissionQuestionMachine, type QuestionOutput } from './permission-question.machine.js';
import { definedFields } from '../domain/defined-fields.js';

export interface AcpSessionInput {
  sessionId: string;
  modeId: string;
  permissionTimeoutMs: number;
}

interface PromptSlot {
  promptId: string;
  missionId: string;
  runId?: string;
  /** submitted: the hall has not said yet; waiting: queued; running: its run lives. */
  state: 'submitted' | 'waiting' | 'running';
  cancelRequested: boolean;
}

export interface AcpSessionContext extends AcpSessionInput {
  prompts: PromptSlot[];
  /** Rules the user allowed for the rest of the session (allow_always). */
  rules: string[];
  /** Missions whose prompt was answered `cancelled` before they started: stopped if they start after all. */
  abandoned: string[];
}

export type AcpSessionEvent =
  | { type: 'acp.prompt'; promptId: string; missionId: string }
  | { type: 'acp.cancel' }
  | { type: 'acp.close' }
  | { type: 'acp.setMode'; modeId: string }
  | { type: 'hall.queued'; missionId: string }
  | { type: 'hall.spawned'; missionId: string; runId: string }
  | { type: 'hall.done'; missionId: string; end: RunEnd; cancelRequested: boolean }
  | { type: 'hall.rejected'; missionId: string; error: string }
  /** The prompt's mission left its queue without a run (cancelled by its id from another face). */
  | { type: 'hall.dropped'; missionId: string }
  | { type: 'question.asked'; questionId: string; runId: string; rule?: string }
  /** Another face answered the question first: stop asking the client. */
  | { type: 'question.withdraw'; questionId: string; reason: string }
  | DoneActorEvent<QuestionOutput>;

export type AcpSessionEffect =
  | { type: 'acp.submit'; promptId: string; missionId: string; modeId: string }
  | { type: 'acp.answer'; promptId: string; answer: PromptAnswer }
  | { type: 'acp.cancelRun'; runId: string }
  | { type: 'acp.dropQueued' }
  | { type: 'acp.modeChanged'; modeId: string }
  | { type: 'acp.permissionAnswer'; questionId: string; output: QuestionOutput }
  | { type: 'acp.closed' };

const slotOf = (context: AcpSessionContext, missionId: string) => context.prompts.find((p) => p.missionId === missionId);

export const acpSessionMachine = setup({
  types: {} as {
    context: AcpSessionContext;
    input: AcpSessionInput;
    events: AcpSessionEvent;
    emitted: AcpSessionEffect;
  },
  actors: { question: permissionQuestionMachine },
  actions: {
    cancelAll: enqueueActions(({ context, enqueue, self }) => {
      // The waiting prompts are dropped first: the running one's end frees the binding for them.
      enqueue.emit({ type: 'acp.dropQueued' });
      const keep: PromptSlot[] = [];
      const abandoned = [...context.abandoned];
      for (const p of context.prompts) {
        if (p.state === 'running' && p.runId !== undefined) {
          keep.push({ ...p, cancelRequested: true });
          enqueue.emit({ type: 'acp.cancelRun', runId: p.runId });
        } else {
          abandoned.push(p.missionId);
          enqueue.emit({ type: 'acp.answer', promptId: p.promptId, answer: { stopReason: 'cancelled' } });
        }
      }
      enqueue.assign({ prompts: keep, abandoned });
      for (const child of Object.values(self.getSnapshot().children)) {
        if (child) enqueue.sendTo(child, { type: 'question.cancel', reason: 'the turn was cancelled' });
      }
    }),
  },
}).createMachine({
  id: 'acpSession',
  context: ({ input }) => ({ ...input, prompts: [], rules: [], abandoned: [] }),
  initial: 'open',
  states: {
    open: {
      on: {
        'acp.prompt': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.assign({
              prompts: [
                ...context.prompts,
                { promptId: event.promptId, missionId: event.missionId, state: 'submitted', cancelRequested: false },
              ],
            });
            enqueue.emit({ type: 'acp.submit', promptId: event.promptId, missionId: event.missionId, modeId: context.modeId });
          }),
        },
        'hall.queued': {
          actions: assign({
            prompts: ({ context, event }) =>
              context.prompts.map((p) =>
                p.missionId === event.missionId && p.state === 'submitted' ? { ...p, state: 'waiting' as const } : p,
              ),
          }),
        },
        'hall.spawned': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (context.abandoned.includes(event.missionId)) {
              enqueue.emit({ type: 'acp.cancelRun', runId: event.runId });
              return;
            }
            enqueue.assign({
              prompts: context.prompts.map((p) =>
                p.missionId === event.missionId ? { ...p, state: 'running' as const, runId: event.runId } : p,
              ),
            });
          }),
        },
        'hall.done': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const slot = slotOf(context, event.missionId);
            if (!slot) return;
            enqueue.assign({ prompts: context.prompts.filter((p) => p !== slot) });
            enqueue.emit({
              type: 'acp.answer',
              promptId: slot.promptId,
              answer: promptAnswer(event.end, slot.cancelRequested || event.cancelRequested),
            });
          }),
        },
        'hall.rejected': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const slot = slotOf(context, event.missionId);
            if (!slot) return;
            enqueue.assign({ prompts: context.prompts.filter((p) => p !== slot) });
            enqueue.emit({ type: 'acp.answer', promptId: slot.promptId, answer: { error: event.error } });
          }),
        },
        'hall.dropped': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const slot = slotOf(context, event.missionId);
            if (!slot) return;
            enqueue.assign({ prompts: context.prompts.filter((p) => p !== slot) });
            enqueue.emit({ type: 'acp.answer', promptId: slot.promptId, answer: { stopReason: 'cancelled' } });
          }),
        },
        'acp.cancel': { actions: 'cancelAll' },
        'acp.setMode': {
          actions: enqueueActions(({ event, enqueue }) => {
            enqueue.assign({ modeId: event.modeId });
            enqueue.emit({ type: 'acp.modeChanged', modeId: event.modeId });
          }),
        },
        'question.asked': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            if (event.rule !== undefined && context.rules.includes(event.rule)) {
              enqueue.emit({
                type: 'acp.permissionAnswer',
                questionId: event.questionId,
                output: { questionId: event.questionId, answer: 'session', reason: `allowed for this session earlier: ${event.rule}` },
              });
              return;
            }
            enqueue.spawnChild('question', {
              id: `question:${event.questionId}`,
              input: {
                questionId: event.questionId,
                runId: event.runId,
                ...definedFields({ rule: event.rule }),
                timeoutMs: context.permissionTimeoutMs,
              },
            });
          }),
        },
        'question.withdraw': {
          actions: enqueueActions(({ event, enqueue, self }) => {
            // Gone already (answered, timed out): nothing to withdraw.
            const child = self.getSnapshot().children[`question:${event.questionId}`];
            if (child) enqueue.sendTo(child, { type: 'question.cancel', reason: event.reason });
          }),
        },
        'xstate.done.actor.*': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.stopChild(event.actorId);
            const output = event.output;
            if (output.rememberRule !== undefined && !context.rules.includes(output.rememberRule)) {
              enqueue.assign({ rules: [...context.rules, output.rememberRule] });
            }
            enqueue.emit({ type: 'acp.permissionAnswer', questionId: output.questionId, output });
          }),
        },
        'acp.close': { target: 'closed', actions: 'cancelAll' },
      },
    },
    closed: {
      type: 'final',
      entry: enqueueActions(({ enqueue }) => enqueue.emit({ type: 'acp.closed' })),
    },
  },
});
