/**
 * One permission question of a raider, put to a person:
 *
 *   asking → allowed | refused | timedOut | cancelled
 *
 * Only `allowed` lets the tool call run. No answer within permission_timeout,
 * a cancelled turn or an error refuses. The asking itself (a tool_call update
 * and session/request_permission) is the named actor `askClient`.
 */
import { assign, fromPromise, setup } from 'xstate';
import type { PermissionAnswerValue } from '../domain/permission.js';
import { errorMessage } from '../domain/error-message.js';
import { definedFields } from '../domain/defined-fields.js';

export interface QuestionInput {
  questionId: string;
  runId: string;
  /** The rule `allow_always` would add; without it that option is not offered. */
  rule?: string;
  timeoutMs: number;
}

/** What the person chose. */
export type ClientChoice = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' | 'cancelled' | 'unknown';

export interface QuestionOutput {
  questionId: string;
  answer: PermissionAnswerValue;
  reason: string;
  /** The rule to remember for the rest of the ACP session (allow_always). */
  rememberRule?: string;
}

export type QuestionEvent = { type: 'question.cancel'; reason: string };

export const permissionQuestionMachine = setup({
  types: {} as {
    context: QuestionInput & { output?: QuestionOutput };
    input: QuestionInput;
    events: QuestionEvent;
    output: QuestionOutput;
  },
  actors: {
    askClient: fromPromise<ClientChoice, QuestionInput>(() => {
      throw new Error('askClient is not provided');
    }),
  },
  delays: {
    permissionTimeout: ({ context }) => context.timeoutMs,
  },
}).createMachine({
  id: 'question',
  context: ({ input }) => ({ ...input }),
  initial: 'asking',
  states: {
    asking: {
      invoke: {
        src: 'askClient',
        input: ({ context }) => ({
          questionId: context.questionId,
          runId: context.runId,
          ...definedFields({ rule: context.rule }),
          timeoutMs: context.timeoutMs,
        }),
        onDone: [
          {
            guard: ({ event }) => event.output === 'allow_once',
            target: 'allowed',
            actions: assign({
              output: ({ context }) => ({ questionId: context.questionId, answer: 'once' as const, reason: 'allowed once by the user' }),
            }),
          },
          {
            guard: ({ event, context }) => event.output === 'allow_always' && context.rule !== undefined,
            target: 'allowed',
            actions: assign({
              output: ({ context }) => ({
                questionId: context.questionId,
                answer: 'session' as const,
                reason: `allowed for this session by the user: ${context.rule}`,
                ...definedFields({ rememberRule: context.rule }),
              }),
            }),
          },
          {
            guard: ({ event }) => event.output === 'cancelled',
            target: 'cancelled',
            actions: assign({
              output: ({ context }) => ({
                questionId: context.questionId,
                answer: 'no' as const,
                reason: 'the user cancelled the question',
              }),
            }),
          },
          {
            target: 'refused',
            actions: assign({
              output: ({ context, event }) => ({
                questionId: context.questionId,
                answer: 'no' as const,
                reason: event.output === 'unknown' ? 'the answer was not one of the options offered' : 'refused by the user',
              }),
            }),
          },
        ],
        onError: {
          target: 'refused',
          actions: assign({
            output: ({ context, event }) => ({
              questionId: context.questionId,
              answer: 'no' as const,
              reason: `the question could not be asked: ${errorMessage(event.error)}`,
            }),
          }),
        },
      },
      after: {
        permissionTimeout: {
          target: 'timedOut',
          actions: assign({
            output: ({ context }) => ({
              questionId: context.questionId,
              answer: 'no' as const,
              reason: `no answer within ${context.timeoutMs / 1000} s (permission_timeout)`,
            }),
          }),
        },
      },
      on: {
        'question.cancel': {
          target: 'cancelled',
          actions: assign({
            output: ({ context, event }) => ({ questionId: context.questionId, answer: 'no' as const, reason: event.reason }),
          }),
        },
      },
    },
    allowed: { type: 'final' },
    refused: { type: 'final' },
    timedOut: { type: 'final' },
    cancelled: { type: 'final' },
  },
  output: ({ context }) => context.output ?? { questionId: context.questionId, answer: 'no', reason: 'no answer' },
});
