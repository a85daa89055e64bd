/**
 * The frames a client sends on the control socket: one JSON object per line,
 * `{"type":"command","payload":{"cmd":NAME,...}}` or
 * `{"type":"subscribe","payload":{"filter":PREFIX}}`. A frame that is not one
 * of them is answered `{"error": TEXT}`; the connection stays open.
 */
import { z } from 'zod';
import { COMMAND_PAYLOADS, isCommandName, plainSpawn, type CommandName, type CommandPayload } from './commands.js';
import { firstProblem } from './checks.js';
import { errorMessage } from '../domain/error-message.js';
import { isRecord } from '../domain/records.js';

const payload = z
  .record(z.string(), z.unknown(), { error: 'invalid frame: payload must be a JSON object' })
  .nullish()
  .transform((value) => value ?? {})
  .describe('The command or the subscription (absent or null: empty).');

export const Frame = z
  .object(
    { type: z.unknown().optional().describe('`command` or `subscribe`.'), payload },
    { error: 'invalid frame: expected a JSON object with type and payload' },
  )
  .describe('One line a client sends.');

export const SubscribePayload = z
  .object({
    filter: z
      .string({ error: 'subscribe: filter must be a string' })
      .nullish()
      .transform((value) => value ?? '')
      .describe('Events whose type starts with it are delivered; empty (or absent): all but `inspect.*`.'),
  })
  .describe('Turns the connection into a stream of events; replies to later commands on it are still written.');

/** A command frame; its payload is checked against its command's schema by `checkCommand`. */
export type ParsedFrame =
  | { kind: 'command'; cmd: CommandName; body: Record<string, unknown> }
  | { kind: 'subscribe'; filter: string }
  | { kind: 'error'; error: string };

/** Reads one line a client sent: a command, a subscription, or the error to answer. */
export function parseFrame(line: string): ParsedFrame {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    return { kind: 'error', error: `invalid JSON: ${errorMessage(err)}` };
  }
  let frame = plainFrame(json);
  if (frame === undefined) {
    const checked = Frame.safeParse(json);
    if (!checked.success) return { kind: 'error', error: firstProblem(checked.error) };
    frame = checked.data;
  }
  const { type, payload: body } = frame;
  if (type === 'subscribe') {
    const subscription = SubscribePayload.safeParse(body);
    return subscription.success
      ? { kind: 'subscribe', filter: subscription.data.filter }
      : { kind: 'error', error: firstProblem(subscription.error) };
  }
  if (type !== 'command') return { kind: 'error', error: `unknown message type: ${typeof type === 'string' ? type : ''}` };
  const cmd = body.cmd;
  if (!isCommandName(cmd)) return { kind: 'error', error: `unknown command: ${typeof cmd === 'string' ? cmd : ''}` };
  return { kind: 'command', cmd, body };
}

/**
 * A frame as clients write it, a JSON object whose payload is one (or
 * absent, or null), read without the schema: it answers every other frame.
 * A payload with an own `__proto__` key goes through the schema, which reads
 * it its own way.
 */
function plainFrame(json: unknown): z.infer<typeof Frame> | undefined {
  if (!isRecord(json)) return undefined;
  const { type, payload } = json;
  if (payload === undefined || payload === null) return { type, payload: {} };
  return isRecord(payload) && !Object.hasOwn(payload, '__proto__') ? { type, payload } : undefined;
}

/** Payloads read without their schema when they plainly pass it (on every mission's path); see plainSpawn. */
const PLAIN: { [C in CommandName]?: (body: Readonly<Record<string, unknown>>) => CommandPayload<C> | undefined } = { spawn: plainSpawn };

/** Each command's schema, typed by its name, so a checked payload keeps the type of the command it belongs to. */
const CHECKED: { [C in CommandName]: z.ZodType<CommandPayload<C>> } = COMMAND_PAYLOADS;

/** Checks a command's payload against its schema; an error carries the text to answer. */
export function checkCommand<C extends CommandName>(
  cmd: C,
  body: unknown,
): { ok: true; payload: CommandPayload<C> } | { ok: false; error: string } {
  const plain = isRecord(body) ? PLAIN[cmd]?.(body) : undefined;
  if (plain !== undefined) return { ok: true, payload: plain };
  const checked = CHECKED[cmd].safeParse(body);
  return checked.success ? { ok: true, payload: checked.data } : { ok: false, error: firstProblem(checked.error) };
}
