/**
 * The dashboard's security rules, one function each. A browser is hostile
 * ground even on loopback: any page it shows may send requests here, and a
 * DNS-rebound name makes such a page same-origin without fetch metadata.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The cookie carries the port: cookies are not isolated by port, two halls on one host must not clash. */
export function cookieName(port: number): string {
  return `raider_hall_dashboard_${port}`;
}

/** `Host` values a request may carry: loopback names and configured ones, each with the port. */
export function allowedHosts(port: number, names: readonly string[]): Set<string> {
  return new Set(['127.0.0.1', 'localhost', '[::1]', ...names].map((name) => `${name.toLowerCase()}:${port}`));
}

export function hostAllowed(req: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const host = req.headers.host;
  return host !== undefined && allowed.has(host.toLowerCase());
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function tokenMatches(given: string | null, token: string): boolean {
  return given !== null && sameSecret(given, token);
}

function cookieValue(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** How a request proved it holds the token, or null. */
export type Credential = 'cookie' | 'bearer' | null;

export function credentialOf(req: IncomingMessage, token: string, cookie: string): Credential {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7).trim(), token)) return 'bearer';
  const value = cookieValue(req, cookie);
  return value !== null && sameSecret(value, token) ? 'cookie' : null;
}

/**
 * Why a change (a POST) is refused, or null. `same-site` is refused even with
 * the cookie: two ports of 127.0.0.1 are one site and share cookies, so any
 * local web app could otherwise post with ours. Without fetch metadata only
 * a script with the bearer token may change anything.
 */
export function changeRefusal(req: IncomingMessage, credential: Credential): string | null {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined)
    return site === 'same-origin' ? null : `changes are taken only from the dashboard's own page (Sec-Fetch-Site: ${site})`;
  return credential === 'bearer' ? null : 'changes without fetch metadata need the Authorization: Bearer token';
}

/**
 * Why an API read is refused, or null. Without CORS headers a browser does
 * not let another origin read our answers; refusing other sites' reads
 * outright keeps it so should a browser get that wrong.
 */
export function readRefusal(req: IncomingMessage): string | null {
  const site = req.headers['sec-fetch-site'];
  return site === 'same-site' || site === 'cross-site' ? `the API answers only the dashboard's own page (Sec-Fetch-Site: ${site})` : null;
}

export function isJsonBody(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

/** Headers every answer carries; `scriptHashes` lets the page's inline import map run and nothing else inline. */
export function securityHeaders(res: ServerResponse, scriptHashes: readonly string[]): void {
  const scripts = ["'self'", ...scriptHashes.map((h) => `'sha256-${h}'`)].join(' ');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'self'; script-src ${scripts}; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-store');
}
