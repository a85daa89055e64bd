import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ConfigResult, defaultHallConfig, parseHallConfig } from '../../src/adapters/config/hall-config-schema.js';
import type { HallConfig } from '../../src/ports/hall-config.js';
import { HALL_CONFIG_FILE, loadHallConfig, noConfigWarning } from '../../src/adapters/config/load-hall-config.js';

const FILE = '/x/.raider-hall.yml';

function ok(text: string): { config: HallConfig; warnings: string[] } {
  const r = parseHallConfig(text, FILE);
  if (!r.ok) throw new Error(`expected ok, got errors:\n${r.errors.join('\n')}`);
  return r;
}

function errors(text: string): string[] {
  const r: ConfigResult = parseHallConfig(text, FILE);
  if (r.ok) throw new Error(`expected errors, got ${JSON.stringify(r.config)}`);
  return r.errors;
}

// An example config as another implementation of the hall documents it. Its rendering reads `lagertha:{`
// (a space lost); YAML needs `lagertha: {` — see the syntax error test below.
const SEED_EXAMPLE = `longhouse: false
preferred_lib_target: .raider-hall/lib
raiders:
  bjorn:   { engine: anthropic, persona: caveman }
  lagertha: { engine: openai,    persona: polite, packs: [git-guru] }
cron:
  - { name: 1bjorn, cron: '*/15 * * * *', mission: 'ping CI' }
telegram:
  bots:
    ops: { token: '...', allowlist: [42], routing: { '*': lagertha } }
acp: { port: 38421, host: 127.0.0.1 }
logs: { keep_events: 20, max_log_size: 1048576 }
cancel_grace: 5
permission_timeout: 120
`;

/** The config of an empty file: what each key is when the file does not set it. */
const DEFAULTS: HallConfig = {
  raiders: {},
  cron: [],
  telegram: null,
  acp: { port: null, host: '127.0.0.1' },
  logs: { keep_events: 20, max_log_size: 1048576 },
  cancel_grace: 5,
  worktree: { max_age: null, max_disk: null },
  permission_timeout: 120,
  longhouse: false,
  preferred_lib_target: null,
  mcp: { enable: false },
  questions: { dashboard: false, socket: false },
  storage: { postgres: null },
  cluster: 'default',
  hall_id: null,
  cluster_mode: 'alone',
  lease_seconds: 15,
  max_running: null,
};

describe('parseHallConfig: the seed example', () => {
  it('parses with the expected values and no warnings', () => {
    const { config, warnings } = ok(SEED_EXAMPLE);
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      ...DEFAULTS,
      longhouse: false,
      preferred_lib_target: '.raider-hall/lib',
      raiders: {
        bjorn: { engine: 'anthropic', persona: 'caveman', packs: [], ignoredKeys: [] },
        lagertha: { engine: 'openai', persona: 'polite', packs: ['git-guru'], ignoredKeys: [] },
      },
      cron: [{ id: '1bjorn', name: '1bjorn', cron: '*/15 * * * *', mission: 'ping CI', coalesce: false, catch_up: 'once' }],
      telegram: {
        api_root: 'https://api.telegram.org',
        bots: [
          {
            name: 'ops',
            token: '...',
            allowlist: ['42'],
            allowed_chats: [],
            routing: { '*': 'lagertha' },
            questions: false,
            auto_reply: false,
            api_root: 'https://api.telegram.org',
          },
        ],
      },
      acp: { port: 38421, host: '127.0.0.1' },
      logs: { keep_events: 20, max_log_size: 1048576 },
      cancel_grace: 5,
      permission_timeout: 120,
    } satisfies HallConfig);
  });

  it('keeps the raiders in the order of the file', () => {
    const { config } = ok('raiders:\n  zed: {}\n  1Bjorn: {}\n  alf: {}\n');
    expect(Object.keys(config.raiders)).toEqual(['zed', '1Bjorn', 'alf']);
  });

  it('takes the provider example and provider next to engine (refused at spawn, not at load)', () => {
    const { config } = ok(
      'raiders:\n  ivar: { provider: acme, model: example-model, persona: caveman }\n  both: { provider: acme, engine: openai, permission_mode: acceptEdits }\n',
    );
    expect(config.raiders.ivar).toEqual({ provider: 'acme', model: 'example-model', persona: 'caveman', packs: [], ignoredKeys: [] });
    expect(config.raiders.both).toEqual({ provider: 'acme', engine: 'openai', permission_mode: 'acceptEdits', packs: [], ignoredKeys: [] });
  });
});

describe('defaults', () => {
  it('defaultHallConfig() is the documented defaults, a fresh object each time', () => {
    expect(defaultHallConfig()).toEqual(DEFAULTS);
    const a = defaultHallConfig();
    a.raiders.x = { packs: [], ignoredKeys: [] };
    expect(defaultHallConfig().raiders).toEqual({});
  });

  it('an empty file, a comment-only file and empty values are all defaults', () => {
    for (const text of ['', '# nothing yet\n', '---\n', 'raiders:\ncron:\ntelegram:\nacp:\nlogs:\ncancel_grace: ~\nmcp:\n']) {
      expect(parseHallConfig(text, FILE)).toEqual({ ok: true, config: DEFAULTS, warnings: [] });
    }
  });

  it('fills the defaults of raider entries, cron jobs, bots and sections', () => {
    const { config } = ok(`raiders:
  bjorn:
cron:
  - { name: bjorn, cron: '@daily' }
telegram:
  api_root: http://localhost:8081/
  bots:
    ops: { token: t1 }
    dev: { token: t2, api_root: 'https://tg.example/' }
acp: { port: 0 }
logs: { keep_events: 0 }
`);
    expect(config.raiders.bjorn).toEqual({ packs: [], ignoredKeys: [] });
    expect(config.cron).toEqual([{ id: 'bjorn', name: 'bjorn', cron: '@daily', mission: '', coalesce: false, catch_up: 'once' }]);
    expect(config.telegram?.api_root).toBe('http://localhost:8081');
    expect(config.telegram?.bots.map((b) => [b.name, b.api_root, b.allowlist, b.allowed_chats, b.routing])).toEqual([
      ['ops', 'http://localhost:8081', [], [], {}],
      ['dev', 'https://tg.example', [], [], {}],
    ]);
    expect(config.acp).toEqual({ port: 0, host: '127.0.0.1' });
    expect(config.logs).toEqual({ keep_events: 0, max_log_size: 1048576 });
  });

  it('takes every optional value when given', () => {
    const { config, warnings } = ok(`longhouse: 1
preferred_lib_target: lib/here
cancel_grace: 0.25
permission_timeout: 2.5
mcp: { enable: true }
acp: { host: 0.0.0.0 }
cron:
  - { id: nightly, name: 1bjorn, cron: '0 3 * * *', mission: sweep, coalesce: true, catch_up: skip, tz: Europe/Berlin }
`);
    expect(warnings).toEqual([]);
    expect(config.longhouse).toBe(true);
    expect(config.preferred_lib_target).toBe('lib/here');
    expect(config.cancel_grace).toBe(0.25);
    expect(config.permission_timeout).toBe(2.5);
    expect(config.mcp).toEqual({ enable: true });
    expect(config.acp).toEqual({ port: null, host: '0.0.0.0' });
    expect(config.cron[0]).toEqual({
      id: 'nightly',
      name: '1bjorn',
      cron: '0 3 * * *',
      mission: 'sweep',
      coalesce: true,
      catch_up: 'skip',
      tz: 'Europe/Berlin',
    });
    expect(ok('longhouse: 0').config.longhouse).toBe(false);
    expect(ok('longhouse: true').config.longhouse).toBe(true);
    expect(ok('cancel_grace: 0').config.cancel_grace).toBe(0);
    expect(ok('worktree: { max_age: 604800 }').config.worktree).toEqual({ max_age: 604800, max_disk: null });
    expect(ok('worktree: { max_disk: 10737418240 }').config.worktree.max_disk).toBe(10737418240);
  });
});

describe('raiders.NAME.worktree', () => {
  it('true is every default, false and absence are none', () => {
    const { config } = ok('raiders:\n  a: { worktree: true }\n  b: { worktree: false }\n  c: {}\n');
    expect(config.raiders.a?.worktree).toEqual({ copy: [], keep: 'changed' });
    expect(config.raiders.b).not.toHaveProperty('worktree');
    expect(config.raiders.c).not.toHaveProperty('worktree');
  });

  it('a mapping says base, copy, keep and dir', () => {
    const { config } = ok('raiders:\n  a: { worktree: { base: main, copy: [.env, config/local.yml], keep: always, dir: wt } }\n');
    expect(config.raiders.a?.worktree).toEqual({ base: 'main', copy: ['.env', 'config/local.yml'], keep: 'always', dir: 'wt' });
  });
});

describe('parseHallConfig: ACP agents', () => {
  // Kept as written: the run expands it from the hall's environment.
  const KEY_REF = '$' + '{KEY}';

  it('reads acp (command, args, env as written) and the presets, with model and permission_mode', () => {
    const { config, warnings } = ok(
      'raiders:\n' +
        `  claude: { acp: { command: claude-agent-acp, env: { ANTHROPIC_API_KEY: "${KEY_REF}" } }, model: sonnet, permission_mode: default }\n` +
        '  codex: { agent: codex }\n' +
        '  own: { acp: { command: ./my-agent, args: [--stdio], start_timeout: 90 } }\n' +
        '  toolless: { acp: { command: ./my-agent, hall_tools: false } }\n' +
        '  warm: { acp: { command: ./my-agent, keep_warm: 2, warm_idle: 30 } }\n',
    );
    expect(warnings).toEqual([]);
    expect(config.raiders.claude).toEqual({
      acp: { command: 'claude-agent-acp', args: [], env: { ANTHROPIC_API_KEY: KEY_REF } },
      model: 'sonnet',
      permission_mode: 'default',
      packs: [],
      ignoredKeys: [],
    });
    expect(config.raiders.codex).toEqual({ agent: 'codex', packs: [], ignoredKeys: [] });
    expect(config.raiders.own?.acp).toEqual({ command: './my-agent', args: ['--stdio'], env: {}, start_timeout: 90 });
    expect(config.raiders.toolless?.acp).toEqual({ command: './my-agent', args: [], env: {}, hall_tools: false });
    expect(config.raiders.warm?.acp).toEqual({ command: './my-agent', args: [], env: {}, keep_warm: 2, warm_idle: 30 });
  });
});

describe('bad values: file + key path + expectation', () => {
  const cases: Array<[string, string]> = [
    ['cancel_grace: soon', 'cancel_grace: expected a number >= 0, got "soon"'],
    ['cancel_grace: -1', 'cancel_grace: expected a number >= 0, got -1'],
    ['permission_timeout: 0', 'permission_timeout: expected a number > 0, got 0'],
    ['longhouse: maybe', 'longhouse: expected true or false, got "maybe"'],
    ['longhouse: 2', 'longhouse: expected true or false, got 2'],
    ['preferred_lib_target: [a]', 'preferred_lib_target: expected a directory path, got a list'],
    ['raiders: [bjorn]', 'raiders: expected a mapping of raider names to raider entries, got a list'],
    ['raiders: { bjorn: { packs: 3 } }', 'raiders.bjorn.packs: expected a list of pack names, got 3'],
    ['raiders: { bjorn: { packs: [ok, 7] } }', 'raiders.bjorn.packs[1]: expected a pack name, got 7'],
    ['raiders: { bjorn: { persona: [a] } }', 'raiders.bjorn.persona: expected a pack name, got a list'],
    ['raiders: { bjorn: { engine: "" } }', 'raiders.bjorn.engine: expected an engine name, got ""'],
    [
      'raiders: { bjorn: { engine: nosuch } }',
      'raiders.bjorn.engine: expected an engine: one of anthropic, openai, scripted, got "nosuch"',
    ],
    [
      'raiders: { bjorn: { permission_mode: yolo } }',
      'raiders.bjorn.permission_mode: expected one of default, acceptEdits, plan, auto, bypassPermissions, got "yolo"',
    ],
    ['raiders: { bjorn: 5 }', 'raiders.bjorn: expected a mapping of raider settings, got 5'],
    ['raiders: { bjorn: { worktree: 5 } }', 'raiders.bjorn.worktree: expected true, false or a mapping (base, copy, keep, dir), got 5'],
    ['raiders: { bjorn: { worktree: { keep: never } } }', 'raiders.bjorn.worktree.keep: expected "changed" or "always", got "never"'],
    ['raiders: { bjorn: { worktree: { copy: .env } } }', 'raiders.bjorn.worktree.copy: expected a list of files, got ".env"'],
    [
      'raiders: { bjorn: { worktree: { copy: [../secret] } } }',
      'raiders.bjorn.worktree.copy[0]: expected a file inside the hall root (relative, no ..), got "../secret"',
    ],
    [
      'raiders: { bjorn: { worktree: { dir: /tmp/w } } }',
      'raiders.bjorn.worktree.dir: expected a directory inside the hall root (relative, no ..), got "/tmp/w"',
    ],
    ['raiders: { bjorn: { worktree: { base: "" } } }', 'raiders.bjorn.worktree.base: expected a commit, branch or tag, got ""'],
    [
      'raiders: { claude: { acp: { command: claude-agent-acp }, engine: openai } }',
      'raiders.claude.engine: engine is a setting of the built-in raider; an entry with acp runs an ACP agent, which has none (remove engine or acp)',
    ],
    [
      'raiders: { c: { agent: codex, provider: acme } }',
      'raiders.c.provider: provider is a setting of the built-in raider; an entry with agent',
    ],
    ['raiders: { c: { agent: codex, packs: [a] } }', 'raiders.c.packs: packs is a setting of the built-in raider'],
    ['raiders: { c: { agent: codex, persona: polite } }', 'raiders.c.persona: persona is a setting of the built-in raider'],
    ['raiders: { c: { agent: codex, acp: { command: x } } }', 'raiders.c.agent: acp and agent exclude each other on one entry'],
    [
      'raiders: { c: { agent: cursor } }',
      'raiders.c.agent: expected an agent preset: one of claude, codex, gemini, opencode, got "cursor"',
    ],
    ['raiders: { c: { acp: { args: [] } } }', 'raiders.c.acp.command: required'],
    ['raiders: { c: { acp: { command: x, args: x } } }', 'raiders.c.acp.args: expected a list of arguments, got "x"'],
    ['raiders: { c: { acp: { command: x, env: { A: [1] } } } }', 'raiders.c.acp.env.A: expected a string, got a list'],
    ['raiders: { c: { acp: { command: x, start_timeout: 0 } } }', 'raiders.c.acp.start_timeout: expected a number of seconds > 0, got 0'],
    ['raiders: { c: { acp: { command: x, keep_warm: 9 } } }', 'raiders.c.acp.keep_warm: expected a whole number from 0 to 8, got 9'],
    ['raiders: { c: { acp: { command: x, keep_warm: 1.5 } } }', 'raiders.c.acp.keep_warm: expected a whole number from 0 to 8, got 1.5'],
    ['raiders: { c: { acp: { command: x, keep_warm: -1 } } }', 'raiders.c.acp.keep_warm: expected a whole number from 0 to 8, got -1'],
    ['raiders: { c: { acp: { command: x, warm_idle: 0 } } }', 'raiders.c.acp.warm_idle: expected a number of seconds > 0, got 0'],
    ['raiders: { c: { acp: { command: x, hall_tools: maybe } } }', 'raiders.c.acp.hall_tools: expected true or false, got "maybe"'],
    [
      'raiders: { "../x": {} }',
      'raiders["../x"]: expected a raider name (1-64 letters, digits, _ or -, not starting with _ or -), got "../x"',
    ],
    ['raiders: { _x: {} }', 'raiders._x: expected a raider name (1-64 letters, digits, _ or -, not starting with _ or -), got "_x"'],
    [`raiders: { ${'a'.repeat(65)}: {} }`, `raiders.${'a'.repeat(65)}: expected a raider name`],
    ['cron: { name: x }', 'cron: expected a list of cron jobs, got a mapping'],
    ['cron: [ 5 ]', 'cron[0]: expected a mapping (a cron job), got 5'],
    ["cron: [ { cron: '* * * * *' } ]", 'cron[0].name: required'],
    ["cron: [ { name: a, cron: '* * * * *' }, { name: b } ]", 'cron[1].cron: required'],
    ["cron: [ { name: 'a b', cron: x } ]", 'cron[0].name: expected a raider name'],
    ["cron: [ { name: a, cron: '' } ]", 'cron[0].cron: expected a cron expression, got ""'],
    ['cron: [ { name: a, cron: x, coalesce: often } ]', 'cron[0].coalesce: expected true or false, got "often"'],
    ['cron: [ { name: a, cron: x, catch_up: all } ]', 'cron[0].catch_up: expected "once" or "skip", got "all"'],
    ['cron: [ { name: a, cron: x, tz: Mars/Base } ]', 'cron[0].tz: expected an IANA time zone such as Europe/Berlin, got "Mars/Base"'],
    ['cron: [ { name: a, cron: x, mission: [1] } ]', 'cron[0].mission: expected a string, got a list'],
    ['telegram: [ops]', 'telegram: expected a mapping, got a list'],
    ['telegram: { api_root: ftp://x }', 'telegram.api_root: expected an http(s) URL, got "ftp://x"'],
    ['telegram: { bots: { ops: { token: t, allowlist: 42 } } }', 'telegram.bots.ops.allowlist: expected a list of Telegram ids, got 42'],
    [
      'telegram: { bots: { ops: { token: t, allowlist: [alice] } } }',
      'telegram.bots.ops.allowlist[0]: expected a Telegram id (an integer), got "alice"',
    ],
    [
      'telegram: { bots: { ops: { token: t, allowed_chats: [1.5] } } }',
      'telegram.bots.ops.allowed_chats[0]: expected a Telegram id (an integer), got 1.5',
    ],
    [
      'telegram: { bots: { ops: { token: t, routing: { bob: x } } } }',
      'telegram.bots.ops.routing.bob: expected a chat id or "*", got "bob"',
    ],
    ["telegram: { bots: { ops: { token: t, routing: { '*': 'no/pe' } } } }", 'telegram.bots.ops.routing["*"]: expected a raider name'],
    ['telegram: { bots: { "a b": { token: t } } }', 'telegram.bots["a b"]: expected a bot name'],
    ['telegram: { bots: { ops: { token: t, api_root: x } } }', 'telegram.bots.ops.api_root: expected an http(s) URL, got "x"'],
    ['acp: 38421', 'acp: expected a mapping, got 38421'],
    ['acp: { port: 70000 }', 'acp.port: expected a port number (1-65535, or 0 for any free port), got 70000'],
    ['acp: { port: "x" }', 'acp.port: expected a port number (1-65535, or 0 for any free port), got "x"'],
    ['acp: { port: 80.5 }', 'acp.port: expected a port number (1-65535, or 0 for any free port), got 80.5'],
    ['acp: { host: 1 }', 'acp.host: expected a host name or address, got 1'],
    ['logs: { keep_events: -1 }', 'logs.keep_events: expected a whole number >= 0, got -1'],
    ['logs: { max_log_size: 1.5 }', 'logs.max_log_size: expected a whole number >= 0, got 1.5'],
    ['mcp: { enable: yes }', 'mcp.enable: expected true or false, got "yes"'],
    ['worktree: { max_age: 0 }', 'worktree.max_age: expected a number of seconds > 0, got 0'],
    ['worktree: { max_disk: -1 }', 'worktree.max_disk: expected a number of bytes > 0, got -1'],
    ['worktree: 7', 'worktree: expected a mapping (max_age, max_disk), got 7'],
  ];

  it.each(cases)('%s', (text, message) => {
    const errs = errors(text);
    expect(errs).toHaveLength(1);
    expect(errs[0]?.startsWith(`${FILE}: ${message}`), errs[0]).toBe(true);
  });

  it('does not echo a bad bot token', () => {
    expect(errors('telegram: { bots: { ops: { token: 123456 } } }')).toEqual([
      `${FILE}: telegram.bots.ops.token: expected a string (the bot token)`,
    ]);
  });

  it('reports every error, in a fixed order', () => {
    const text = 'cancel_grace: soon\nraiders: { bjorn: { packs: 3 } }\nlogs: { keep_events: x }\ncron: [ { name: a } ]\n';
    const expected = [
      `${FILE}: raiders.bjorn.packs: expected a list of pack names, got 3`,
      `${FILE}: cron[0].cron: required`,
      `${FILE}: logs.keep_events: expected a whole number >= 0, got "x"`,
      `${FILE}: cancel_grace: expected a number >= 0, got "soon"`,
    ];
    expect(errors(text)).toEqual(expected);
    expect(errors(text)).toEqual(expected);
  });

  it('a duplicate cron id names both entries', () => {
    expect(
      errors("cron:\n  - { name: 1bjorn, cron: '* * * * *' }\n  - { name: x, cron: y }\n  - { name: 1bjorn, cron: '0 * * * *' }\n"),
    ).toEqual([`${FILE}: cron[2]: duplicate id "1bjorn", also the id of cron[0] (the id defaults to the name; give one of them an id)`]);
    expect(errors('cron:\n  - { id: j, name: a, cron: x }\n  - { id: j, name: b, cron: x }\n')).toEqual([
      `${FILE}: cron[1].id: duplicate id "j", also the id of cron[0]`,
    ]);
    // distinct ids on one raider are fine
    expect(ok('cron:\n  - { id: a, name: bjorn, cron: x }\n  - { id: b, name: bjorn, cron: x }\n').config.cron.map((j) => j.id)).toEqual([
      'a',
      'b',
    ]);
  });

  it('the top level must be a mapping', () => {
    expect(errors('- bjorn')).toEqual([`${FILE}: expected a mapping of settings at the top level, got a list`]);
    expect(errors('just words')).toEqual([`${FILE}: expected a mapping of settings at the top level, got "just words"`]);
  });
});

describe('unknown keys warn and are ignored', () => {
  it('at every level', () => {
    const { config, warnings } = ok(`colour: red
raiders:
  bjorn: { engine: anthropic, colour: blue }
cron:
  - { name: bjorn, cron: x, every: 5m }
telegram:
  polling: fast
  bots:
    ops: { token: t, secret: s }
acp: { port: 1, tls: true }
logs: { rotate: daily }
mcp: { enable: false, socket: x }
`);
    expect(warnings).toEqual([
      `${FILE}: unknown key colour (ignored)`,
      `${FILE}: unknown key raiders.bjorn.colour (ignored)`,
      `${FILE}: unknown key cron[0].every (ignored)`,
      `${FILE}: unknown key telegram.polling (ignored)`,
      `${FILE}: unknown key telegram.bots.ops.secret (ignored)`,
      `${FILE}: unknown key acp.tls (ignored)`,
      `${FILE}: unknown key logs.rotate (ignored)`,
      `${FILE}: unknown key mcp.socket (ignored)`,
    ]);
    expect(config.raiders.bjorn).toEqual({ engine: 'anthropic', packs: [], ignoredKeys: [] });
    expect(config.acp.port).toBe(1);
  });

  it('mcp and isolated on a raider entry are noted in ignoredKeys, not warned about', () => {
    const { config, warnings } = ok('raiders:\n  a: { mcp: { servers: [x] }, isolated: true }\n  b: { isolated: ~ }\n  c: {}\n');
    expect(warnings).toEqual([]);
    expect(config.raiders.a?.ignoredKeys).toEqual(['isolated', 'mcp']);
    expect(config.raiders.b?.ignoredKeys).toEqual(['isolated']);
    expect(config.raiders.c?.ignoredKeys).toEqual([]);
    expect(Object.keys(config.raiders.a ?? {}).sort()).toEqual(['ignoredKeys', 'packs']);
  });

  it('a bot without a token is skipped with a warning', () => {
    const { config, warnings } = ok('telegram:\n  bots:\n    ops: { allowlist: [1] }\n    dev:\n    live: { token: t }\n');
    expect(config.telegram?.bots.map((b) => b.name)).toEqual(['live']);
    expect(warnings).toEqual([`${FILE}: telegram.bots.ops: no token, bot skipped`, `${FILE}: telegram.bots.dev: no token, bot skipped`]);
  });
});

describe('Telegram ids', () => {
  it('numbers and strings in allowlist / allowed_chats become strings', () => {
    const { config } = ok(`telegram:
  bots:
    ops:
      token: '123:abc'
      allowlist: [42, "43", -7]
      allowed_chats: [-1001234567890, "-1009876543210"]
      routing: { -1001234567890: bjorn, 42: lagertha, '*': bjorn }
`);
    const bot = config.telegram?.bots[0];
    expect(bot?.allowlist).toEqual(['42', '43', '-7']);
    expect(bot?.allowed_chats).toEqual(['-1001234567890', '-1009876543210']);
    expect(bot?.routing).toEqual({ '-1001234567890': 'bjorn', '42': 'lagertha', '*': 'bjorn' });
  });
});

describe('a raider entry under a numbered name', () => {
  it('is an error naming the line and the entry to write instead', () => {
    expect(errors('raiders:\n  ivar: {}\n  1bjorn: { engine: scripted }\n')).toEqual([
      `${FILE}: line 3, column 3: raiders.1bjorn: a raider entry is named without a number: write bjorn: ` +
        '(1bjorn is the singleton slot of the entry bjorn; spawn 1bjorn to run it one mission at a time)',
    ]);
  });

  it('comes with the other errors of the file', () => {
    const errs = errors('raiders: { 22ivar: ~ }\ncancel_grace: soon\n');
    expect(errs[0]).toMatch(/^\/x\/\.raider-hall\.yml: line 1, column 12: raiders\.22ivar: .*write ivar:/);
    expect(errs[1]).toMatch(/cancel_grace: expected a number >= 0/);
  });

  it('a name that only starts with digits is not numbered', () => {
    expect(Object.keys(ok('raiders: { 1Bjorn: {}, 7: {}, 2-b: {} }\n').config.raiders).sort()).toEqual(['1Bjorn', '2-b', '7']);
  });
});

describe('YAML syntax errors', () => {
  it('name the file, line and column', () => {
    const errs = errors('raiders:\n  bjorn: { engine: anthropic\ncron: []\n');
    expect(errs.length).toBeGreaterThan(0);
    expect(errs[0]).toMatch(/^\/x\/\.raider-hall\.yml: line \d+, column \d+: YAML syntax error: /);
  });

  it('the seed text as rendered (`lagertha:{`) is one: line 5', () => {
    const errs = errors(SEED_EXAMPLE.replace('lagertha: {', 'lagertha:{'));
    expect(errs[0]).toMatch(/^\/x\/\.raider-hall\.yml: line 5, column \d+: YAML syntax error: /);
  });

  it('a duplicate key is an error with its line', () => {
    expect(errors('cancel_grace: 1\ncancel_grace: 2\n')[0]).toMatch(
      /^\/x\/\.raider-hall\.yml: line 2, column 1: YAML syntax error: Map keys must be unique/,
    );
  });
});

describe('loadHallConfig', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'hall-config-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a missing file is the default config, with a warning that names the root and the init command', () => {
    expect(loadHallConfig(root)).toEqual({ ok: true, config: defaultHallConfig(), warnings: [noConfigWarning(root)] });
    expect(noConfigWarning(root)).toContain(`no .raider-hall.yml in ${root}: the hall runs with no raiders configured`);
    expect(noConfigWarning(root)).toContain('raider hall init --name NAME');
  });

  it('reads ROOT/.raider-hall.yml and names it in messages', () => {
    writeFileSync(join(root, HALL_CONFIG_FILE), SEED_EXAMPLE.replace('permission_timeout: 120', 'permission_timeout: 30\nfoo: 1'));
    const r = loadHallConfig(root);
    expect(r.ok && r.config.permission_timeout).toBe(30);
    expect(r.ok && r.config.raiders.lagertha?.packs).toEqual(['git-guru']);
    expect(r.ok && r.warnings).toEqual([`${join(root, HALL_CONFIG_FILE)}: unknown key foo (ignored)`]);

    writeFileSync(join(root, HALL_CONFIG_FILE), 'cancel_grace: soon\n');
    expect(loadHallConfig(root)).toEqual({
      ok: false,
      errors: [`${join(root, HALL_CONFIG_FILE)}: cancel_grace: expected a number >= 0, got "soon"`],
    });
  });

  it('an unreadable config is an error, not the defaults', () => {
    mkdirSync(join(root, HALL_CONFIG_FILE));
    const r = loadHallConfig(root);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]).toMatch(
      new RegExp(`^${join(root, HALL_CONFIG_FILE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot read: `),
    );
  });
});
