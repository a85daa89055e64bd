/**
 * A run's permission question put to the ACP client that owns its session:
 * the tool call is shown first (so the client can show what is asked about),
 * then `session/request_permission` with the options the hall offers.
 */
import type { PermissionOption, RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { permissionToolCall, questionCall, type AcpUpdate, type AnnouncedCalls } from '../../domain/acp-mapping.js';
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
