import { afterEach, describe, expect, it } from 'vitest';
import { promptText } from '../../src/domain/acp-mapping.js';
import { runCli } from '../support/hall-client.js';
import type { TestHall } from '../support/test-hall.js';
import { startAcpHall } from './acp-support.js';

let hall: TestHall | undefined;
afterEach(async () => {
  await hall?.stop();
  hall = undefined;
});

describe('raider acp (terminal client)', () => {
  it('sends what is typed as a prompt, prints the reply and the stop reason', async () => {
    const started = await startAcpHall('raiders: { bjorn: {} }\n');
    hall = started.hall;
    const res = await runCli(['acp', '--port', String(started.port)], { input: 'answer typed at the keyboard\n' });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('typed at the keyboard');
    expect(res.stdout).toContain('-- stopReason: end_turn');
    expect(res.stdout.trim().endsWith('bye.')).toBe(true);
  });

  it('reaches the hall through its ACP socket without a port', async () => {
    const started = await startAcpHall('raiders: { bjorn: {} }\n');
    hall = started.hall;
    const res = await runCli(['acp', hall.root], { input: 'answer over the socket\n' });
    expect(res.stdout).toContain('over the socket');
  });
});

describe('ACP listener', () => {
  it('announces acp.started with the port it bound', async () => {
    const started = await startAcpHall('raiders: { bjorn: {} }\n');
    hall = started.hall;
    const status = await hall.request({ cmd: 'status' });
    expect(status.acp).toMatchObject({ host: '127.0.0.1', port: started.port, sessions: 0 });
    expect(started.port).toBeGreaterThan(0);
  });
});

describe('prompt blocks', () => {
  it('joins text blocks and passes resource links as references', () => {
    expect(
      promptText([
        { type: 'text', text: 'look at' },
        { type: 'resource_link', uri: 'file:///src/a.ts', name: 'a.ts' },
        { type: 'image', data: 'xx', mimeType: 'image/png' },
        { type: 'text', text: '  please  ' },
      ]),
    ).toBe('look at\n[a.ts](file:///src/a.ts)\n  please');
    expect(promptText([{ type: 'image', data: 'x', mimeType: 'image/png' }])).toBe('');
  });
});
