/** Small helpers for answering and reading HTTP messages with node:http. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import stringify from 'safe-stable-stringify';
import { errorMessage } from '../../domain/error-message.js';

/** The largest request body taken: a mission is text, not an upload. */
export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, stringify(body) ?? 'null');
}

/** A reply already made as JSON text (put together from the bus's own lines, say). */
export function sendJsonText(res: ServerResponse, status: number, json: string): void {
  const text = `${json}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendBody(res: ServerResponse, type: string, body: Buffer): void {
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}

/** The request's JSON body, or an error that says what is wrong with it. */
export async function readJsonBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const piece = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += piece.length;
    if (size > MAX_BODY_BYTES) return { ok: false, error: `request body over ${MAX_BODY_BYTES} bytes` };
    chunks.push(piece);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (err) {
    return { ok: false, error: `invalid JSON: ${errorMessage(err)}` };
  }
}
