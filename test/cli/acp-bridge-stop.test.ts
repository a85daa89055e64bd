/**
 * The ACP bridge run by hand (a member of the caller's process group, as in a
 * shell's job): SIGTERM in any phase of the run, or a hangup, ends the agent
 * and what the agent started, never leaving them behind. The agent is
 * test/fixtures/scripted-acp-agent.mjs behind a shell that first starts a
 * helper (`sleep`), as an adapter starts the program it drives.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RAIDER_BIN, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { alive, eventually, removeRoots, tempRoot } from './cli-helpers.js';

vi.setConfig({ testTimeout: 60_000 });

afterAll(() => removeRoots());

/** The pid a file holds; 0 while it is missing or not yet written (a file is created empty, then written). */
function pidIn(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const pid = Number(fs.readFileSync(file, 'utf8').split(' ')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

const PHASES = [
  { phase: 'initialize', start: 'hang-initialize', mission: 'answer never', signal: 'SIGTERM' },
  { phase: 'session/new', start: 'hang-session-new', mission: 'answer never', signal: 'SIGTERM' },
  { phase: 'session/prompt', start: '', mission: 'deaf', signal: 'SIGTERM' },
  // The terminal's hangup, which the agent in a session of its own does not get itself.
  { phase: 'session/prompt', start: '', mission: 'deaf', signal: 'SIGHUP' },
] as const;

describe.concurrent('raider acp-client by hand, stopped by a signal', () => {
  for (const { phase, start, mission, signal } of PHASES) {
    it(`${signal} during ${phase}: the bridge dies by it, and the agent and the helper it started are gone`, async () => {
      const root = tempRoot('acp-bridge-stop-');
      const agentPidFile = path.join(root, 'agent.pid');
      const helperPidFile = path.join(root, 'helper.pid');
      const script = `sleep 300 & echo $! > ${JSON.stringify(helperPidFile)}; exec ${JSON.stringify(SCRIPTED_ACP_AGENT)}`;
      const bridge = spawn(
        process.execPath,
        [
          RAIDER_BIN,
          'acp-client',
          '--stream-json',
          '--agent-command',
          'sh',
          '--agent-arg=-c',
          `--agent-arg=${script}`,
          '--',
          ...mission.split(' '),
        ],
        {
          cwd: root,
          env: { ...process.env, SCRIPTED_ACP_START: start, SCRIPTED_ACP_PID_FILE: agentPidFile },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      bridge.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const ended = new Promise<NodeJS.Signals | null>((resolve) => bridge.on('exit', (_code, signal) => resolve(signal)));
      let checked = false;
      try {
        // The agent is up (and, for a prompt, has said it is waiting): the run is in that phase.
        // Both files written, not only created: an empty file's pid would be 0, this process's own group.
        await eventually(() => expect(pidIn(agentPidFile) > 0 && pidIn(helperPidFile) > 0).toBe(true), 20_000, 20);
        if (phase === 'session/prompt') await eventually(() => expect(stdout).toContain('waiting'), 20_000, 20);
        const agentPid = pidIn(agentPidFile);
        const helperPid = pidIn(helperPidFile);
        expect(alive(helperPid)).toBe(true);

        bridge.kill(signal);
        expect(await ended).toBe(signal);
        expect(alive(agentPid)).toBe(false);
        await eventually(() => expect(alive(helperPid)).toBe(false), 5_000, 20);
        checked = true;
      } finally {
        // A test that failed before its end leaves nothing running: the bridge, the agent in its own
        // session, and the helper (`sleep 300`) would outlive the test process.
        if (!checked) {
          if (bridge.exitCode === null && bridge.signalCode === null) bridge.kill('SIGKILL');
          for (const file of [agentPidFile, helperPidFile]) {
            const pid = pidIn(file);
            // Never 0 (a file half written): that would signal this process's own group.
            if (pid === 0) continue;
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // Already gone.
            }
          }
        }
      }
    });
  }
});
