/**
 * Who may talk to a bot, fail-closed, ids compared as
 * strings:
 *
 *   1. no sender                      → no_sender
 *   2. sender not in the allowlist    → sender_not_allowed (an empty list rejects everyone;
 *                                       a chat id in the allowlist never opens a group)
 *   3. a private chat (chat = sender) → accepted
 *   4. chat not in allowed_chats      → chat_not_allowed
 */

export type RejectReason = 'no_sender' | 'sender_not_allowed' | 'chat_not_allowed';

export interface AccessLists {
  /** User ids. */
  allowlist: readonly string[];
  /** Group and channel chat ids. */
  allowed_chats: readonly string[];
}

export type AccessDecision = { ok: true } | { ok: false; reason: RejectReason };

export function accessDecision(lists: AccessLists, chatId: number | string, fromId: number | string | undefined): AccessDecision {
  if (fromId === undefined || String(fromId) === '') return { ok: false, reason: 'no_sender' };
  const sender = String(fromId);
  if (!lists.allowlist.includes(sender)) return { ok: false, reason: 'sender_not_allowed' };
  const chat = String(chatId);
  if (chat === sender) return { ok: true };
  if (!lists.allowed_chats.includes(chat)) return { ok: false, reason: 'chat_not_allowed' };
  return { ok: true };
}

/** What is probably a mistake in a bot's lists, in the reference's words. */
export function accessWarnings(lists: AccessLists): string[] {
  const warnings: string[] = [];
  if (lists.allowlist.length === 0) warnings.push('empty allowlist, every message will be rejected');
  for (const entry of lists.allowlist) {
    if (entry.startsWith('-')) {
      warnings.push(
        `allowlist entry ${entry} is a chat id, not a user id; list it under allowed_chats and put the members' user ids in allowlist`,
      );
    }
  }
  return warnings;
}
