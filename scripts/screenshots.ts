/**
 * `npm run screenshots`: starts a demo hall (the real raider with the
 * scripted engine: offline, no API key) with its dashboard, gives it some
 * work (runs that complete, fail, are cancelled, run, wait, and a session
 * with tool calls and an edit), and renders the dashboard's main pages with Chromium
 * into docs/dashboard-*.png. Chromium: CHROMIUM_PATH or /usr/bin/chromium.
 * Names after `--` shoot those pages only (`npm run screenshots -- statechart`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { defaultAdapters } from '../src/actors/default-adapters.js';
import { startHall } from '../src/actors/hall-supervisor.js';
import { readDashboardFile } from '../src/adapters/dashboard/dashboard-file.js';
import { hallRequest } from '../src/protocol/hall-client.js';

const DOCS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'].find((p) => p !== undefined && p !== '' && fs.existsSync(p));

/** The pages to shoot: all of them when none is named. */
const ONLY = new Set(process.argv.slice(2));

const CONFIG = `raiders:
  bjorn: { engine: scripted, permission_mode: acceptEdits }
cancel_grace: 2
dashboard: { listen: "127.0.0.1:0" }
`;

const SCRIPT = `replies:
  - match: "look|files"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - tool: read_file
        arguments: { path: "README.md" }
      - tool: edit_file
        arguments: { path: "README.md", old_string: "# Demo hall", new_string: "# Demo hall\\n\\nLooked at by bjorn." }
      - message: "I looked around: a README and a hall config. ({{mission}})"
  - match: "slow|long"
    steps:
      - sleep: 60
      - message: "Done with the long one: {{mission}}"
  - match: "fail"
    steps:
      - fail: "the demo raider was asked to fail"
  - steps:
      - sleep: 0.3
      - message: "Raid done: {{mission}}"
`;

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<number> {
  if (CHROMIUM === undefined) {
    process.stderr.write('screenshots: no Chromium: install the chromium package or set CHROMIUM_PATH\n');
    return 1;
  }
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'raider-screens-')), 'demo-hall');
  fs.mkdirSync(path.join(root, '.raider'), { recursive: true });
  fs.writeFileSync(path.join(root, '.raider-hall.yml'), CONFIG);
  fs.writeFileSync(path.join(root, '.raider', 'script.yml'), SCRIPT);
  fs.writeFileSync(path.join(root, 'README.md'), '# Demo hall\n');
  const env = { ...process.env };
  delete env.RAIDER_HALL_RAIDER_BIN;
  const hall = await startHall({ root, env, adapters: defaultAdapters, log: () => {} });
  const socket = hall.paths.socket;
  const spawn = async (name: string, mission: string) => {
    const reply = await hallRequest(socket, 'spawn', { name, mission });
    if ('error' in reply) throw new Error(`spawn ${name}: ${reply.error}`);
    return reply;
  };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  try {
    // Some history: runs that completed and failed, one cancelled, a session with tool calls, missions that waited.
    const looked = await spawn('2bjorn', 'look at the files');
    for (const mission of ['tidy the shelf', 'sweep the hall', 'count the shields']) await spawn('3bjorn', mission);
    for (const mission of ['look at the files', 'write the weekly report', 'fail the flaky check', 'tidy the notes'])
      await spawn('bjorn', mission);
    const cancelled = await spawn('bjorn', 'a slow mission to cancel');
    // A raider takes its SIGINT as a cancel once it runs (before, the signal would just end the process).
    const eventsPath = 'events_path' in cancelled ? String(cancelled.events_path) : '';
    await until('the run to start', () => (fs.readFileSync(eventsPath, 'utf8').includes('"run.state"') ? true : undefined));
    await hallRequest(socket, 'cancel', { id: 'id' in cancelled ? String(cancelled.id) : '' });
    // The present: a running slot with missions waiting behind it, and a run in parallel.
    const survey = await spawn('1bjorn', 'a long survey of the logs');
    await spawn('1bjorn', 'then summarise the survey');
    await spawn('1bjorn', 'then mail the summary');
    await spawn('bjorn', 'a slow audit');
    const board = readDashboardFile(root);
    if ('error' in board) throw new Error(board.error);
    const sessionId = await until('the session', async () => {
      const reply = await hallRequest(socket, 'sessions', {});
      return 'sessions' in reply ? reply.sessions.find((s) => s.binding === 'slot:2bjorn')?.session : undefined;
    });
    await until('the runs to end', async () => {
      const ps = await hallRequest(socket, 'ps', {});
      return 'raiders' in ps && ps.raiders.length === 2 ? true : undefined;
    });

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${board.url}?token=${board.token}`);
    const shot = async (name: string, hash: string, ready: (p: Page) => Promise<unknown>, fullPage = false) => {
      if (ONLY.size > 0 && !ONLY.has(name)) return;
      await page.goto(`${board.url}${hash}`);
      await ready(page);
      const file = path.join(DOCS, `dashboard-${name}.png`);
      await page.screenshot({ path: file, fullPage });
      process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    };
    await shot('runs', '#/', (p) => p.getByRole('table', { name: 'Runs' }).getByRole('cell', { name: 'cancelled', exact: true }).waitFor());
    await shot('run', `#/runs/${'id' in cancelled ? String(cancelled.id) : ''}`, (p) =>
      p
        .getByRole('region', { name: 'Conversation' })
        .getByRole('article', { name: 'Cancel escalation' })
        .getByText(/SIGINT/)
        .waitFor(),
    );
    await shot(
      'conversation',
      `#/runs/${'id' in looked ? String(looked.id) : ''}`,
      (p) => p.getByRole('region', { name: 'Conversation' }).getByRole('article', { name: 'End' }).waitFor(),
      true,
    );
    await shot('tree', '#/tree', (p) =>
      p
        .getByRole('region', { name: 'Live tree' })
        .getByText(/waiting #2/)
        .waitFor(),
    );
    await shot('charts', '#/charts', (p) => p.getByRole('figure', { name: 'Tokens per day' }).locator('canvas').first().waitFor(), true);
    await shot('session', `#/sessions/${sessionId}`, (p) =>
      p
        .getByRole('region', { name: 'Journal' })
        .getByText(/assistant:/)
        .waitFor(),
    );
    await shot(
      'statechart',
      `#/actors/run:${'id' in survey ? String(survey.id) : ''}`,
      (p) =>
        p
          .getByRole('region', { name: /^statechart of run:/ })
          .locator('[data-state="alive.running"][aria-current="true"]')
          .waitFor(),
      // The whole chart and the events below it.
      true,
    );
    return 0;
  } finally {
    await browser.close();
    hall.stop();
    await hall.stopped;
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`screenshots: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
