/**
 * The hall's tools for an ACP agent (docs/agents.md, "The hall's tools"):
 * with `mcp: { enable: true }` the agent's sessions (new, resumed, loaded)
 * get the hall's MCP server on stdio, `raider hall mcp ROOT`, in their
 * `mcpServers`, and the agent can call the hall's tools through it; an entry
 * opts out with `acp: { hall_tools: false }`. The agent is
 * test/fixtures/scripted-acp-agent.mjs, which writes each mcpServers it gets.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REPO, SCRIPTED_ACP_AGENT } from '../support/hall-client.js';
import { doneOf, type FileHall, hallForFile, removeRoots, request, socketOf } from './cli-helpers.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
afterAll(removeRoots);

const RAIDER_BIN = path.join(REPO, 'bin', 'raider');
const entry = (out: string, more = '', env = '') =>
  `{ acp: { command: ${JSON.stringify(SCRIPTED_ACP_AGENT)}, env: { SCRIPTED_ACP_MCP_OUT: ${out}${env} }${more} } }`;
const RAIDERS = `raiders:
  tooled: ${entry('tooled.mcp')}
  untooled: ${entry('untooled.mcp', ', hall_tools: false')}
  resumer: ${entry('resumer.mcp', '', ', SCRIPTED_ACP_SESSIONS: ".", SCRIPTED_ACP_CONTINUE: resume')}
`;
const enabled = hallForFile(`${RAIDERS}mcp: { enable: true }\n`);
const disabled = hallForFile(RAIDERS);

async function run(file: FileHall, name: string, mission: string): Promise<{ id: string; done: Record<string, unknown> }> {
  const spawned = await request(socketOf(file.root), { cmd: 'spawn', name, mission });
  return { id: spawned.id, done: await doneOf(file.tap, spawned.id) };
}

function serversSeen(file: FileHall, out: string): unknown[] {
  return fs
    .readFileSync(path.join(file.root, out), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
}

const hallServer = (root: string) => ({ name: 'raider-hall', command: process.execPath, args: [RAIDER_BIN, 'hall', 'mcp', root], env: [] });

describe.concurrent("the hall's MCP server in the agent's sessions", () => {
  it('with mcp.enable, session/new gets `raider hall mcp ROOT`, and the agent calls a hall tool through it', async () => {
    const r = await run(enabled, 'tooled', 'mcp list_raiders');
    expect(r.done).toMatchObject({ status: 'completed' });
    expect(serversSeen(enabled, 'tooled.mcp')).toEqual([[hallServer(enabled.root)]]);
    // The hall's ps, through the MCP server: this very run is running.
    expect(String(r.done.response)).toMatch(/^list_raiders: /);
    expect(String(r.done.response)).toContain(r.id);
  });

  it('a resumed session gets it too', async () => {
    await run(enabled, '1resumer', 'answer one');
    expect((await run(enabled, '1resumer', 'answer two')).done).toMatchObject({ status: 'completed' });
    expect(serversSeen(enabled, 'resumer.mcp')).toEqual([[hallServer(enabled.root)], [hallServer(enabled.root)]]);
  });

  it('acp.hall_tools: false opts an entry out', async () => {
    expect((await run(enabled, 'untooled', 'answer hi')).done).toMatchObject({ status: 'completed' });
    expect(serversSeen(enabled, 'untooled.mcp')).toEqual([[]]);
  });

  it('without mcp.enable the agent gets no MCP server', async () => {
    expect((await run(disabled, 'tooled', 'answer hi')).done).toMatchObject({ status: 'completed' });
    expect(serversSeen(disabled, 'tooled.mcp')).toEqual([[]]);
  });
});
