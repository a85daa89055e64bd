/** The `dashboard` key of .raider-hall.yml: defaults, the listen address and the loopback rule. */
import { describe, expect, it } from 'vitest';
import { parseHallConfig } from '../../src/adapters/config/hall-config-schema.js';

function load(text: string) {
  return parseHallConfig(text, '.raider-hall.yml');
}

describe('dashboard in .raider-hall.yml', () => {
  it('is absent by default', () => {
    const result = load('raiders: { bjorn: {} }\n');
    expect(result.ok && result.config.dashboard).toBeUndefined();
  });

  it('takes a loopback address with its defaults; port 0 is any free port', () => {
    for (const [listen, host, port] of [
      ['127.0.0.1:7420', '127.0.0.1', 7420],
      ['localhost:0', 'localhost', 0],
      ['[::1]:8080', '::1', 8080],
      ['127.0.0.2:1', '127.0.0.2', 1],
    ] as const) {
      const result = load(`dashboard: { listen: "${listen}" }\n`);
      expect(result.ok && result.config.dashboard, listen).toEqual({
        listen,
        host,
        port,
        allow_remote: false,
        read_only: false,
        hosts: [],
        questions: false,
      });
    }
  });

  it('refuses an address beyond loopback unless allow_remote is true', () => {
    for (const listen of ['0.0.0.0:7420', '192.168.1.2:7420', '[::]:7420', 'hall.lan:7420']) {
      const refused = load(`dashboard: { listen: "${listen}" }\n`);
      expect(refused.ok ? [] : refused.errors, listen).toEqual([
        expect.stringMatching(/^\.raider-hall\.yml: dashboard\.listen: .*not a loopback address.*allow_remote/),
      ]);
      const allowed = load(`dashboard: { listen: "${listen}", allow_remote: true, read_only: true, hosts: [hall.lan] }\n`);
      expect(allowed.ok && allowed.config.dashboard).toMatchObject({ allow_remote: true, read_only: true, hosts: ['hall.lan'] });
    }
  });

  it('names the key for a malformed address or a missing one', () => {
    for (const [text, says] of [
      ['dashboard: { listen: "7420" }', /dashboard\.listen: expected an address HOST:PORT/],
      ['dashboard: { listen: "127.0.0.1:70000" }', /dashboard\.listen: expected an address HOST:PORT/],
      ['dashboard: { read_only: true }', /dashboard\.listen: required/],
      ['dashboard: { listen: "127.0.0.1:1", read_only: maybe }', /dashboard\.read_only: expected true or false/],
    ] as const) {
      const result = load(`${text}\n`);
      expect(result.ok ? [] : result.errors, text).toEqual([expect.stringMatching(says)]);
    }
  });
});
