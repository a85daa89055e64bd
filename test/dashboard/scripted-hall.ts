/**
 * A hall with its dashboard whose raiders are the real built-in raider
 * playing a script (the scripted engine: no API key, no network), so runs
 * write real session journals: messages, tool calls, permission decisions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dashboardAdapter } from '../../src/adapters/dashboard/dashboard-adapter.js';
import { startTestHall, tempRoot, type TestHall } from '../support/test-hall.js';
import { boardOf, type Board } from './dashboard-support.js';

/** A tool call, a tool the hall has nobody to ask about (refused: a permission line), an answer. */
export const SCRIPT = `replies:
  - match: "look"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - tool: bash
        arguments: { command: "echo hi" }
      - message: "I looked: {{mission}}"
  - steps:
      - message: "done: {{mission}}"
`;

export async function startScriptedHall(extraConfig = ''): Promise<{ hall: TestHall; board: Board }> {
  const root = tempRoot('dashboard-scripted-');
  fs.mkdirSync(path.join(root, '.raider'), { recursive: true });
  fs.writeFileSync(path.join(root, '.raider', 'script.yml'), SCRIPT);
  const hall = await startTestHall({
    root,
    config: `raiders:\n  bjorn: { engine: scripted }\ndashboard: { listen: "127.0.0.1:0" }\n${extraConfig}`,
    adapters: [dashboardAdapter],
    env: { RAIDER_HALL_RAIDER_BIN: undefined },
  });
  return { hall, board: await boardOf(hall.root) };
}
