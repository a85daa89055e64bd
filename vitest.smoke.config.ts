import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The smoke set: what most depends on the Node version under it, run by
 * `npm run test:smoke`. CI (.ci/run) runs the whole suite on this machine's
 * Node and this set again on the newest LTS Node: starting raiders both ways
 * (posix_spawn and Node's spawn tell failures in Node's words), the control
 * socket, storage on files and on PostgreSQL, ACP (our agent and acpx
 * against it) and one dashboard page in a browser. spawn-run's node-version
 * test says the raiders ran on the Node first on PATH.
 */
export const SMOKE_FILES = [
  'test/integration/spawn-ways.test.ts',
  'test/integration/spawn-run.test.ts',
  'test/integration/fork-server.test.ts',
  'test/integration/spawner-lines.test.ts',
  'test/integration/raider-process.test.ts',
  'test/integration/control-socket.test.ts',
  'test/integration/state-store.test.ts',
  'test/storage/write-ahead-log.test.ts',
  'test/storage/checkpoint-crash.test.ts',
  'test/postgres/hall-on-postgres.test.ts',
  'test/acp/acp-basic.test.ts',
  'test/acp/acpx-e2e.test.ts',
  'test/dashboard/dashboard-browser.test.ts',
];

const { projects: _wholeSuite, ...test } = base.test ?? {};

export default defineConfig({ test: { ...test, include: SMOKE_FILES } });
