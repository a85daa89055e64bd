/**
 * What the hall must answer to one control-socket line, from the wire
 * contract and the hall's
 * documented error texts, written down independently of the hall's code.
 * Used by the fuzz test and the fuzz bench.
 */
import type { Json } from './hall-client.js';

export const MAX_FRAME_BYTES = 1024 * 1024;
const NAME_HINT = "use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit";
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** What the hall must answer to one line: a reply check, or null for no reply. */
export type Expected = null | { exact: Json } | { anyError: true } | { status: true };

const COMMAND_NAMES = new Set(['spawn', 'ps', 'status', 'attach', 'logs', 'kill', 'cancel', 'session_reset', 'telegram_reply']);
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

export class WouldAct extends Error {}

/**
 * The reply the contract gives for one line (without its \n), from the seed,
 * docs/protocol.md and the hall's documented error texts. Throws WouldAct for a line
 * that would subscribe or start a raider: the generator never sends those.
 */
export function expectedReply(line: Buffer): Expected {
  if (line.length > MAX_FRAME_BYTES) return { exact: { error: `frame too long: a line may hold at most ${MAX_FRAME_BYTES} bytes` } };
  const body = line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, -1) : line;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return { exact: { error: 'invalid UTF-8 in frame' } };
  }
  if (text.trim() === '') return null;
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch (err) {
    return { exact: { error: `invalid JSON: ${(err as Error).message}` } };
  }
  if (!isObject(frame)) return { exact: { error: 'invalid frame: expected a JSON object with type and payload' } };
  const payload = frame.payload ?? {};
  if (!isObject(payload)) return { exact: { error: 'invalid frame: payload must be a JSON object' } };
  if (frame.type === 'subscribe') {
    if (payload.filter === undefined || payload.filter === null || typeof payload.filter === 'string') throw new WouldAct('subscribe');
    return { exact: { error: 'subscribe: filter must be a string' } };
  }
  if (frame.type !== 'command') return { exact: { error: `unknown message type: ${typeof frame.type === 'string' ? frame.type : ''}` } };
  const cmd = payload.cmd;
  if (typeof cmd !== 'string' || !COMMAND_NAMES.has(cmd))
    return { exact: { error: `unknown command: ${typeof cmd === 'string' ? cmd : ''}` } };
  const id = payload.id;
  switch (cmd) {
    case 'status':
      return { status: true };
    case 'ps':
      return { exact: { raiders: [] } };
    case 'attach':
    case 'kill':
    case 'cancel':
      return { exact: nonEmpty(id) ? { error: 'raider not found', code: 'run_not_found' } : { error: `${cmd} requires an id` } };
    case 'logs':
      // An id that cannot even be a file name may fail as "command failed: ...".
      return nonEmpty(id) ? { anyError: true } : { exact: { error: 'logs requires an id' } };
    case 'session_reset':
      return {
        exact: { error: nonEmpty(payload.binding) ? `no session bound to ${payload.binding}` : 'session_reset requires a binding' },
      };
    case 'telegram_reply':
      return { exact: { error: 'telegram not configured in .raider-hall.yml' } };
    case 'spawn': {
      const name = payload.name ?? '';
      if (!nonEmpty(name)) return { exact: { error: 'spawn requires a raider name' } };
      if (!SAFE_NAME.test(name)) return { exact: { error: `invalid raider name ${JSON.stringify(name)}: ${NAME_HINT}` } };
      const mission = payload.mission ?? '';
      if (typeof mission !== 'string') return { exact: { error: 'spawn requires a mission (a string)' } };
      if (mission.trim() === '') return { exact: { error: 'spawn requires a mission: it is empty' } };
      if (Buffer.byteLength(mission) > 100_000) return { anyError: true };
      const binding = payload.binding;
      if (binding !== undefined && binding !== null) {
        if (!nonEmpty(binding)) return { exact: { error: 'a binding must be a non-empty string' } };
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the oracle rejects control characters in a binding, as the hall does
        if (binding.length > 256 || /[\s\u0000-\u001f]/.test(binding)) {
          return {
            exact: {
              error: `invalid binding ${JSON.stringify(binding.slice(0, 80))}: no whitespace or control characters, at most 256 characters`,
            },
          };
        }
      }
      throw new WouldAct('spawn');
    }
  }
  throw new Error(`unreachable: ${cmd}`);
}
