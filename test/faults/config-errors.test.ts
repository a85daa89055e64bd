/**
 * A malformed `.raider-hall.yml` of each kind, end to end: `raider hall
 * start` exits 3 with an error that names the file and the key (or the line),
 * and leaves no socket and no pid file. One case of each kind: the parser's
 * details (every key) are test/config; a bad value and a YAML syntax error
 * are test/cli. Each case starts the CLI, which is not cheap.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempRoot } from '../support/hall-client.js';

const CASES: Array<{ what: string; config: string | Buffer | 'directory'; says: RegExp }> = [
  { what: 'a list at the top level', config: '- a\n- b\n', says: /expected a mapping of settings at the top level/ },
  {
    what: 'a wrong type deep in a raider entry',
    config: 'raiders: { bjorn: { packs: 5 } }\n',
    says: /raiders\.bjorn\.packs: expected a list/,
  },
  { what: 'a duplicate key', config: 'raiders: { bjorn: {} }\nraiders: { b: {} }\n', says: /line 2, column 1: .*unique/ },
  {
    what: 'bytes that are not UTF-8',
    config: Buffer.concat([Buffer.from('raiders: { bjorn: {} }\nb'), Buffer.from([0xff]), Buffer.from('d: 1\n')]),
    says: /line 2, column 2: not valid UTF-8/,
  },
  {
    what: 'a raider entry under a numbered name',
    config: 'raiders:\n  1bjorn: { engine: scripted }\n',
    says: /line 2, column 3: raiders\.1bjorn: .*write bjorn: \(1bjorn is the singleton slot of the entry bjorn/,
  },
  { what: 'a directory where the file should be', config: 'directory', says: /cannot read: EISDIR/ },
];

describe.concurrent('raider hall start with a malformed .raider-hall.yml', () => {
  for (const c of CASES) {
    it(`${c.what}: exit 3 naming the file and what is wrong`, async () => {
      const root = tempRoot('bad-config-');
      const file = path.join(root, '.raider-hall.yml');
      if (c.config === 'directory') fs.mkdirSync(file);
      else fs.writeFileSync(file, c.config);
      const r = await runCli(['hall', 'start', root, '--quiet']);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(c.says);
      expect(fs.existsSync(path.join(root, '.raider-hall.socket'))).toBe(false);
      expect(fs.existsSync(path.join(root, '.raider-hall', 'hall.pid'))).toBe(false);
    });
  }
});
