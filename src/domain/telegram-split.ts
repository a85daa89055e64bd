/**
 * Telegram takes at most 4096 characters per message (counted in UTF-16 code
 * units). Longer text is sent in parts, cut at a paragraph, else a line, else
 * a space, else anywhere, but never inside a surrogate pair.
 */

export const TELEGRAM_TEXT_LIMIT = 4096;

export function splitMessage(text: string, limit: number = TELEGRAM_TEXT_LIMIT): string[] {
  if (limit < 2) throw new Error('limit too small');
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    // A cut in the second half only: a break near the start would make a tiny part.
    const floor = Math.floor(limit / 2);
    let cut = -1;
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(sep);
      if (at >= floor) {
        cut = at + sep.length;
        break;
      }
    }
    if (cut < 0) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // a high surrogate stays with its pair
    }
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}
