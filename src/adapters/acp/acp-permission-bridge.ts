/**
 * A run's permission question put to the ACP client that owns its session:
 * the tool call is shown first (so the client can show what is asked about),
 * then `session/request_permission` with the options the hall offers.
 */
import type { PermissionOption, RequestPermissionRequest, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { permissionToolCall, type AcpUpdate, type AnnouncedCalls, type ToolCallShown } from '../../domain/acp-mapping.js';
import type { PermissionQuestion } from '../../domain/permission.js';
import type { ClientChoice } from '../../machines/permission-question.machine.js';

/** What the bridge needs from the connection that owns a session. */
export interface PermissionClient {
  update(sessionId: string, update: AcpUpdate): Promise<void>;
  askPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<string | 'cancelled'>;
}

const CHOICES: readonly ClientChoice[] = ['allow_once', 'allow_always', 'reject_once'];

function isClientChoice(chosen: string): chosen is ClientChoice {
  return CHOICES.some((choice) => choice === chosen);
}

export async function askClientPermission(
  client: PermissionClient,
  target: { sessionId: string; runId: string; question: PermissionQuestion; announced?: AnnouncedCalls | undefined },
  signal: AbortSignal,
): Promise<ClientChoice> {
  const { sessionId, runId, question } = target;
  const { shown, asked } = questionCall(permissionToolCall(runId, question), target.announced);
  await client.update(sessionId, shown);
  const always: PermissionOption[] =
    question.rule !== undefined
      ? [{ optionId: 'allow_always', name: `Allow for this session: ${question.rule}`, kind: 'allow_always' }]
      : [];
  const options: PermissionOption[] = [
    { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
    ...always,
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  ];
  const chosen = await client.askPermission({ sessionId, toolCall: asked, options }, signal);
  if (chosen === 'cancelled') return 'cancelled';
  return options.some((o) => o.optionId === chosen) && isClientChoice(chosen) ? chosen : 'unknown';
}

/**
 * The call a question is about, as the client is shown it before the question
 * (`shown`) and as the question names it (`asked`). ACP's `toolCall` in
 * `session/request_permission` is a ToolCallUpdate, like `tool_call_update`:
 * each field given replaces what the client shows. A call not shown yet is
 * made from the question, the only word on it there is. A call already shown
 * (an ACP agent's own, by the run's events) keeps what it was shown with: its
 * title, kind and input may be the agent's, where the question has the
 * bridge's stand-ins (the call's id, `other`) for what the agent left out.
 * The question marks it pending, gives it the question's text unless it
 * shows its agent's own content (a diff), and names it by the title it shows.
 */
function questionCall(call: ToolCallShown, announced: AnnouncedCalls | undefined): { shown: AcpUpdate; asked: ToolCallUpdate } {
  const was = announced?.get(call.toolCallId);
  if (was === undefined) {
    announced?.set(call.toolCallId, { title: call.title, agentContent: false });
    const { sessionUpdate: _kind, ...asked } = call;
    return { shown: call, asked };
  }
  const marked: ToolCallUpdate = {
    toolCallId: call.toolCallId,
    status: 'pending',
    ...(was.agentContent || call.content === undefined ? {} : { content: call.content }),
  };
  return { shown: { sessionUpdate: 'tool_call_update', ...marked }, asked: { ...marked, title: was.title } };
}
