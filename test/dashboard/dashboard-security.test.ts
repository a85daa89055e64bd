/**
 * The dashboard's security rules, each as the HTTP request it refuses, against
 * a real `raider hall start` process: token and cookie, Host (DNS rebinding),
 * fetch metadata on changes, no CORS, the response headers, read-only, and
 * the config check for a listen address beyond loopback.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, runCli, tapEvents, tempRoot } from '../support/hall-client.js';
import { bearer, cookie, httpRequest, json, startBoardProcess, type Board } from './dashboard-support.js';

let hall: Awaited<ReturnType<typeof startBoardProcess>>;
let board: Board;

beforeAll(async () => {
  hall = await startBoardProcess();
  board = hall.board;
});
afterAll(async () => hall?.stop());

const spawnBody = JSON.stringify({ name: 'bjorn', mission: 'answer hi' });

describe('the dashboard file and status', () => {
  it('writes the URL and a fresh 256-bit token to a 0600 file, and the URL to status', async () => {
    const file = path.join(hall.root, '.raider-hall', 'dashboard.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(board.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(Buffer.from(board.token, 'base64url').length).toBeGreaterThanOrEqual(16);
    const status = await request(path.join(hall.root, '.raider-hall.socket'), { cmd: 'status' });
    expect(status.dashboard).toMatchObject({ url: board.url, read_only: false });
    expect(JSON.stringify(status)).not.toContain(board.token);
  });
});

describe('login', () => {
  it('answers 401 and no data without the token, on the page, the API and the event stream (streamed or polled)', async () => {
    for (const route of [
      '/',
      '/api/status',
      '/api/runs',
      '/api/events',
      '/api/events?poll=1&since=0',
      '/app/main.js',
      '/vendor/preact.mjs',
    ]) {
      const reply = await httpRequest(board, route);
      expect(reply.status, route).toBe(401);
      expect(reply.body).not.toContain(hall.root);
      expect(reply.body).toMatch(/not logged in/);
    }
    const wrongCookie = await httpRequest(board, '/api/status', {
      headers: { Cookie: `raider_hall_dashboard_${board.port}=${'x'.repeat(43)}` },
    });
    expect(wrongCookie.status).toBe(401);
    const wrongBearer = await httpRequest(board, '/api/status', { headers: { Authorization: 'Bearer nope' } });
    expect(wrongBearer.status).toBe(401);
  });

  it('refuses a wrong token without a cookie', async () => {
    const reply = await httpRequest(board, '/?token=wrong');
    expect(reply.status).toBe(401);
    expect(reply.headers['set-cookie']).toBeUndefined();
  });

  it('trades the token for an HttpOnly SameSite=Strict cookie named after the port and redirects to a URL without it', async () => {
    const reply = await httpRequest(board, `/?token=${board.token}`);
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe('/');
    const [setCookie] = reply.headers['set-cookie'] ?? [];
    expect(setCookie).toContain(`raider_hall_dashboard_${board.port}=`);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    const withCookie = await httpRequest(board, '/api/status', { headers: cookie(board) });
    expect(withCookie.status).toBe(200);
    expect(JSON.parse(withCookie.body).root).toBe(hall.root);
  });
});

describe('the Host header', () => {
  it('answers 421 to any other name, the event stream (streamed or polled) included (DNS rebinding)', async () => {
    for (const route of ['/', '/api/status', '/api/events', '/api/events?poll=1&since=0', `/?token=${board.token}`]) {
      const reply = await httpRequest(board, route, { headers: { ...bearer(board), Host: `rebound.example:${board.port}` } });
      expect(reply.status, route).toBe(421);
      expect(reply.body).not.toContain(hall.root);
    }
    const otherPort = await httpRequest(board, '/api/status', { headers: { ...bearer(board), Host: `127.0.0.1:${board.port + 1}` } });
    expect(otherPort.status).toBe(421);
  });

  it('takes 127.0.0.1, localhost and [::1] with the port', async () => {
    for (const name of ['127.0.0.1', 'localhost', 'LOCALHOST', '[::1]']) {
      const reply = await httpRequest(board, '/api/status', { headers: { ...bearer(board), Host: `${name}:${board.port}` } });
      expect(reply.status, name).toBe(200);
    }
  });
});

describe('changes', () => {
  const post = (headers: Record<string, string>) =>
    httpRequest(board, '/api/spawn', { method: 'POST', headers: { ...json, ...headers }, body: spawnBody });

  it('refuses same-site and cross-site posts even with the cookie', async () => {
    for (const site of ['same-site', 'cross-site', 'none']) {
      const reply = await post({ ...cookie(board), 'Sec-Fetch-Site': site });
      expect(reply.status, site).toBe(403);
      expect(JSON.parse(reply.body).error).toContain(site);
    }
  });

  it('refuses a post with the cookie alone and no fetch metadata', async () => {
    const reply = await post(cookie(board));
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body).error).toMatch(/Bearer/);
  });

  it('refuses a change that is not a JSON body, and a GET for a change', async () => {
    const form = await httpRequest(board, '/api/spawn', {
      method: 'POST',
      headers: { ...bearer(board), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=bjorn&mission=answer',
    });
    expect(form.status).toBe(415);
    const get = await httpRequest(board, '/api/spawn', { headers: bearer(board) });
    expect(get.status).toBe(404);
  });

  it('takes a same-origin post with the cookie and a bearer post without metadata; each is a dashboard event on the bus', async () => {
    const events = await tapEvents(path.join(hall.root, '.raider-hall.socket'), 'dashboard.');
    try {
      const fromPage = await post({ ...cookie(board), 'Sec-Fetch-Site': 'same-origin' });
      expect(fromPage.status).toBe(200);
      expect(JSON.parse(fromPage.body).id).toMatch(/^bjorn-/);
      const fromScript = await post(bearer(board));
      expect(fromScript.status).toBe(200);
      const event = await events.waitFor((e) => e.type === 'dashboard.spawn');
      expect(event).toMatchObject({ source: 'dashboard', name: 'bjorn', mission: 'answer hi' });
      await events.waitFor((e) => events.all.filter((x) => x.type === 'dashboard.spawn').length === 2 && e.type === 'dashboard.spawn');
    } finally {
      events.close();
    }
  });

  it('refuses API reads that another site makes with the cookie', async () => {
    for (const site of ['same-site', 'cross-site']) {
      for (const route of ['/api/status', '/api/runs', '/api/events']) {
        const reply = await httpRequest(board, route, { headers: { ...cookie(board), 'Sec-Fetch-Site': site } });
        expect(reply.status, `${site} ${route}`).toBe(403);
        expect(reply.body).not.toContain(hall.root);
      }
    }
    const own = await httpRequest(board, '/api/status', { headers: { ...cookie(board), 'Sec-Fetch-Site': 'same-origin' } });
    expect(own.status).toBe(200);
  });

  it('answers a CORS preflight with no CORS headers', async () => {
    const reply = await httpRequest(board, '/api/spawn', {
      method: 'OPTIONS',
      headers: {
        ...cookie(board),
        Origin: 'http://127.0.0.1:9999',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys(reply.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('response headers', () => {
  it('sends a CSP without unsafe-inline, no framing, nosniff, no referrer, and no-store', async () => {
    for (const route of ['/', '/api/status']) {
      const reply = await httpRequest(board, route, { headers: bearer(board) });
      expect(reply.status).toBe(200);
      const csp = String(reply.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(Object.keys(reply.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });

  it('lets a browser keep only the scripts whose route names their version, and only behind the login', async () => {
    const page = await httpRequest(board, '/', { headers: bearer(board) });
    const main = /<script type="module" src="(\/app\/v-[0-9a-f]+\/bundle\.js)">/.exec(page.body)?.[1] ?? '';
    expect(main).not.toBe('');
    const kept = await httpRequest(board, main, { headers: bearer(board) });
    expect(kept.status).toBe(200);
    expect(kept.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect(kept.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await httpRequest(board, main)).status).toBe(401);
    expect((await httpRequest(board, '/app/main.js', { headers: bearer(board) })).headers['cache-control']).toBe('no-store');
  });
});

describe('read-only, with a configured host name', () => {
  it('answers 403 to every change, even with the bearer token; takes the configured name as Host', async () => {
    const ro = await startBoardProcess('dashboard: { listen: "127.0.0.1:0", read_only: true, hosts: [hall.example] }\n');
    try {
      for (const route of ['/api/spawn', '/api/runs/bjorn-1/cancel', '/api/runs/bjorn-1/kill']) {
        const reply = await httpRequest(ro.board, route, { method: 'POST', headers: { ...json, ...bearer(ro.board) }, body: spawnBody });
        expect(reply.status, route).toBe(403);
        expect(JSON.parse(reply.body).error).toMatch(/read-only/);
      }
      const status = await httpRequest(ro.board, '/api/status', {
        headers: { ...bearer(ro.board), Host: `hall.example:${ro.board.port}` },
      });
      expect(status.status).toBe(200);
      expect(JSON.parse(status.body).dashboard.read_only).toBe(true);
      const unknown = await httpRequest(ro.board, '/api/status', {
        headers: { ...bearer(ro.board), Host: `other.example:${ro.board.port}` },
      });
      expect(unknown.status).toBe(421);
    } finally {
      await ro.stop();
    }
  });
});

describe('the listen address', () => {
  it('refuses an address beyond loopback at config load: exit 3 naming dashboard.listen', async () => {
    const root = tempRoot('dashboard-remote-');
    fs.writeFileSync(path.join(root, '.raider-hall.yml'), 'dashboard: { listen: "0.0.0.0:0" }\n');
    const r = await runCli(['hall', 'start', root, '--quiet']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('dashboard.listen');
    expect(r.stderr).toContain('allow_remote');
    expect(fs.existsSync(path.join(root, '.raider-hall.socket'))).toBe(false);
  });
});
