// `raider provider add|list|rm` through the real command: the file the hall
// reads for refusals (src/adapters/config/provider-store.ts) in the format
// it expects, other content of the file kept, and the usage errors.
import { readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProviderStore } from '../../src/adapters/config/provider-store.js';
import { cleanEnv, cleanUp, ensureBuilt, makeProject, runRaider } from './helpers.js';

beforeAll(ensureBuilt, 120_000);
afterAll(cleanUp);

function withHome(): { home: string; file: string; env: NodeJS.ProcessEnv } {
  const home = makeProject();
  return { home, file: join(home, '.raider', 'config.yml'), env: cleanEnv({ HOME: home }) };
}

describe('raider provider', () => {
  it('add writes providers: {ALIAS: {url, engine, models}} that the hall reads; list shows it; rm removes it', async () => {
    const { file, env } = withHome();
    const add = await runRaider(
      ['provider', 'add', 'acme', 'https://llm.example.com/v1', '--engine', 'anthropic', '--model', 'a-1', '--model', 'a-2'],
      { env },
    );
    expect(add).toMatchObject({ code: 0, stderr: '' });
    expect(add.stdout).toContain('provider acme -> https://llm.example.com/v1 (anthropic)');
    const local = await runRaider(['provider', 'add', 'local', 'http://127.0.0.1:11434/v1', '--key-env', 'LOCAL_KEY'], { env });
    expect(local.code).toBe(0);

    expect(parseYaml(readFileSync(file, 'utf8'))).toEqual({
      providers: {
        acme: { url: 'https://llm.example.com/v1', engine: 'anthropic', models: ['a-1', 'a-2'] },
        local: { url: 'http://127.0.0.1:11434/v1', engine: 'openai', key_env: 'LOCAL_KEY' },
      },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readProviderStore(file)).toEqual({ ok: true, aliases: new Set(['acme', 'local']) });

    const list = await runRaider(['provider', 'list'], { env });
    expect(list.stdout).toBe(
      'acme\tanthropic\thttps://llm.example.com/v1 models: a-1, a-2\nlocal\topenai\thttp://127.0.0.1:11434/v1 key: $LOCAL_KEY\n',
    );

    expect((await runRaider(['provider', 'rm', 'acme'], { env })).code).toBe(0);
    expect(readProviderStore(file)).toEqual({ ok: true, aliases: new Set(['local']) });
    const again = await runRaider(['provider', 'rm', 'acme'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no provider 'acme'/);
  });

  it('add replaces an entry and keeps the rest of the file, comments included', async () => {
    const { home, file, env } = withHome();
    mkdirSync(join(home, '.raider'), { recursive: true });
    writeFileSync(file, '# my settings\ntheme: dark\nproviders:\n  acme: { url: "http://old.example/v1" }\n');
    expect((await runRaider(['provider', 'add', 'acme', 'http://new.example/v1'], { env })).code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('# my settings');
    expect(parseYaml(text)).toEqual({ theme: 'dark', providers: { acme: { url: 'http://new.example/v1', engine: 'openai' } } });
  });

  it('refuses bad input with exit 2 and a broken file with exit 3, changing nothing', async () => {
    const { home, file, env } = withHome();
    const cases: Array<[string[], number, RegExp]> = [
      [['provider', 'add', 'acme'], 2, /add wants ALIAS URL/],
      [['provider', 'add', 'a/b', 'http://x/v1'], 2, /cannot be an alias/],
      [['provider', 'add', 'acme', 'http://x/v1', '--engine', 'gemini'], 2, /--engine must be one of openai, anthropic/],
      [['provider', 'add', 'acme', 'http://x/v1', '--frob'], 2, /Unknown option '--frob'/],
      [['provider', 'add', 'acme', 'ftp://x'], 3, /only http and https/],
      [['provider', 'add', 'acme', 'https://user:pw@x/v1'], 3, /no credentials in the URL/],
      [['provider', 'rm'], 2, /rm wants ALIAS/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runRaider(args, { env });
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.stderr).toMatch(message);
    }
    mkdirSync(join(home, '.raider'), { recursive: true });
    writeFileSync(file, 'providers: [not, a, map]\n');
    const broken = await runRaider(['provider', 'add', 'acme', 'http://x/v1'], { env });
    expect(broken.code).toBe(3);
    expect(broken.stderr).toContain(`${file}: providers:`);
    expect(readFileSync(file, 'utf8')).toBe('providers: [not, a, map]\n');
  });

  it('a mission that starts with `provider` goes after --; without it, it is a usage error', async () => {
    const root = makeProject('replies:\n  - steps: [ { message: "mission: {{mission}}" } ]\n');
    const r = await runRaider(['-e', 'scripted', '-r', root, '--no-session', '--', 'provider', 'is', 'down']);
    expect(r).toMatchObject({ code: 0, stdout: 'mission: provider is down\n' });
    const refused = await runRaider(['provider', 'is', 'down']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toContain("unknown provider command 'is'");
  });
});
