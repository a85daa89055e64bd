/**
 * The system prompt of a run: who the raider is, where it works, how
 * refusals work, then the packs in order (persona last, as the hall
 * passes it). Built fresh for every run, never replayed from a journal.
 */
import type { PermissionMode } from '../domain/permission.js';
import type { Pack } from './packs/resolve.js';

export interface PromptInput {
  root: string;
  mode: PermissionMode;
  packs: readonly Pack[];
  /** Set when the run was started by a hall for a Telegram chat. */
  telegramChat?: string;
  underHall: boolean;
}

export function systemPrompt(input: PromptInput): string {
  const lines = [
    'You are raider, an agent that carries out one mission at a time in a software project.',
    `The project root is ${input.root}. File paths are relative to it; tools cannot reach outside it.`,
    'Use the tools to look before you change anything, and make the smallest change that does the job.',
    `Permission mode: ${input.mode}. A tool call may be refused; the result then says why.`,
    'Do not repeat a refused call: work around it, or say what you need and stop.',
    'When the mission is done, reply with a short final answer that says what you did.',
  ];
  if (input.underHall) {
    lines.push('You run under Raider Hall: hall_status shows what runs there, hall_spawn starts a mission for another raider.');
  }
  if (input.telegramChat !== undefined) {
    lines.push(`This mission came from Telegram chat ${input.telegramChat}; telegram_reply sends a message to that chat.`);
  }
  const parts = [lines.join('\n')];
  for (const pack of input.packs) parts.push(`<pack name="${pack.name}">\n${pack.text}\n</pack>`);
  return parts.join('\n\n');
}
