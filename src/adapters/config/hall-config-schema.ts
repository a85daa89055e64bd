/**
 * `.raider-hall.yml`: the zod schema and the text → config step (the
 * config's types are the contract in ports/hall-config.ts).
 *
 * The keys are listed in the README's "Configuration" section.
 * Unknown keys are warnings; bad values are errors naming the file, the key
 * path and what was expected. The schema is the only list of keys:
 * unknown-key detection walks its shape. Environment overrides
 * (RAIDER_HALL_ACP_PORT, ...) are the caller's business.
 */
import { type Document, isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { ACP_PRESET_NAMES, BUILT_IN_ONLY_KEYS, MAX_KEEP_WARM } from '../../domain/acp-agents.js';
import { isKnownEngine, KNOWN_ENGINES } from '../../domain/engines.js';
import { errorMessage } from '../../domain/error-message.js';
import { NUMBERED_SLOT, SAFE_RAIDER_NAME } from '../../domain/names.js';
import { PERMISSION_MODES } from '../../domain/permission.js';
import { isRecord } from '../../domain/records.js';
import { isInsidePath, type WorktreeSettings } from '../../domain/worktree.js';
import type { CronJobConfig, DashboardConfig, HallConfig, RaiderEntry, TelegramBotConfig } from '../../ports/hall-config.js';

export const DEFAULT_TELEGRAM_API_ROOT = 'https://api.telegram.org';

export type ConfigResult = { ok: true; config: HallConfig; warnings: string[] } | { ok: false; errors: string[] };

// ---------------------------------------------------------------- messages

/** How a value is named in an error: scalars as written, collections by kind. */
function show(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  return String(v);
}

/** zod error option: "required" for a missing value, else "expected WHAT, got VALUE". */
function expected(what: string, opts: { keyWhat?: string; hideValue?: boolean } = {}) {
  return {
    error: (iss: { code?: string; input?: unknown }): string => {
      if (iss.code === 'invalid_key') return `expected ${opts.keyWhat ?? 'a valid key'}, got ${show(iss.input)}`;
      if (iss.input === undefined) return 'required';
      return opts.hideValue ? `expected ${what}` : `expected ${what}, got ${show(iss.input)}`;
    },
  };
}

/** `raiders.bjorn.packs`, `cron[1].cron`, `telegram.bots.ops.routing["*"]`. */
export function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (/^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(String(k))) out += `${out ? '.' : ''}${String(k)}`;
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out;
}

// ---------------------------------------------------------------- leaves

const NAME_WHAT = '1-64 letters, digits, _ or -, not starting with _ or -';
const name = (what: string) => z.string(expected(`${what} (${NAME_WHAT})`)).regex(SAFE_RAIDER_NAME, expected(`${what} (${NAME_WHAT})`));
const text = (what: string) => z.string(expected(what)).min(1, expected(what));
/** A number that passes `test`; any failure is the one message "expected WHAT". */
const number = (what: string, test: (n: number) => boolean) => z.number(expected(what)).refine(test, expected(what));
const count = number('a whole number >= 0', (n) => Number.isInteger(n) && n >= 0);
const flag = z
  .custom<boolean | 0 | 1>((v) => v === true || v === false || v === 0 || v === 1, expected('true or false'))
  .transform((v) => v === true || v === 1);
const url = z
  .string(expected('an http(s) URL'))
  .regex(/^https?:\/\/[^\s/]+\S*$/, expected('an http(s) URL'))
  .transform((u) => u.replace(/\/+$/, ''));
const POSTGRES_URL_WHAT = 'a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE; the password from $' + '{VAR} or PGPASSWORD)';
const ID_WHAT = 'a Telegram id (an integer)';
const telegramId = z
  .custom<number | string>(
    (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,20}$/.test(v)),
    expected(ID_WHAT),
  )
  .transform(String);
const telegramIds = z.array(telegramId, expected(`a list of Telegram ids`));
const validTimeZone = (tz: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

// ---------------------------------------------------------------- sections

/** `HOST:PORT`, with an IPv6 address in brackets; null when it is not one. */
export function parseListen(listen: string): { host: string; port: number } | null {
  const [, written, digits] = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen) ?? [];
  if (written === undefined || digits === undefined || Number(digits) > 65535) return null;
  return { host: written.startsWith('[') ? written.slice(1, -1) : written, port: Number(digits) };
}

/** A browser on another machine must not reach the dashboard unless the config says so. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const dashboard = z
  .object(
    {
      listen: text('an address HOST:PORT such as 127.0.0.1:7420').refine(
        (l) => parseListen(l) !== null,
        expected('an address HOST:PORT such as 127.0.0.1:7420 (port 0 = any free port)'),
      ),
      allow_remote: flag.default(false),
      read_only: flag.default(false),
      hosts: z.array(text('a host name'), expected('a list of host names')).default([]),
      questions: flag.default(false),
    },
    expected('a mapping'),
  )
  .superRefine((d, ctx) => {
    const listen = parseListen(d.listen);
    if (listen && !d.allow_remote && !isLoopbackHost(listen.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['listen'],
        message: `${d.listen} is not a loopback address: the dashboard would be reachable from other machines; use 127.0.0.1:PORT, or set dashboard.allow_remote: true`,
      });
    }
  })
  .transform((d): DashboardConfig => {
    const { host, port } = parseListen(d.listen) ?? { host: '127.0.0.1', port: 0 };
    return { ...d, host, port };
  });

const insidePath = (what: string) =>
  text(`${what} inside the hall root`).refine(isInsidePath, expected(`${what} inside the hall root (relative, no ..)`));

/** `worktree: true` is every default, `false` none; a mapping says more (docs/worktrees.md). */
const worktreeSettings = z
  .preprocess(
    (v) => (v === true || v === 1 ? {} : v === false || v === 0 ? null : v),
    z
      .object(
        {
          base: text('a commit, branch or tag').optional(),
          copy: z.array(insidePath('a file'), expected('a list of files')).default([]),
          keep: z.enum(['changed', 'always'], expected('"changed" or "always"')).default('changed'),
          dir: insidePath('a directory').optional(),
        },
        expected('true, false or a mapping (base, copy, keep, dir)'),
      )
      .nullable(),
  )
  .transform((w): WorktreeSettings | undefined => w ?? undefined);

const acpSettings = z.object(
  {
    command: text('a command (a name on PATH or a path)'),
    args: z.array(z.string(expected('a string')), expected('a list of arguments')).default([]),
    // `${VAR}` is expanded when a run starts, from the hall's environment.
    env: z.record(z.string(), z.string(expected('a string')), expected('a mapping of variable names to values')).default({}),
    start_timeout: number('a number of seconds > 0', (n) => n > 0).optional(),
    // With `mcp: { enable: true }`, the agent's sessions get the hall's MCP server unless this is false.
    hall_tools: flag.optional(),
    // Bridges started ahead of the entry's runs, each handed a run when one comes (docs/agents.md, "Warm bridges").
    keep_warm: number(`a whole number from 0 to ${MAX_KEEP_WARM}`, (n) => Number.isInteger(n) && n >= 0 && n <= MAX_KEEP_WARM).optional(),
    warm_idle: number('a number of seconds > 0', (n) => n > 0).optional(),
  },
  expected('a mapping (command, args, env, start_timeout, hall_tools, keep_warm, warm_idle)'),
);

const raiderEntry = z
  .object(
    {
      // Refused here, at load, rather than by every run of the raider ('' has its own message).
      engine: text('an engine name')
        .refine((v) => v === '' || isKnownEngine(v), expected(`an engine: one of ${KNOWN_ENGINES.join(', ')}`))
        .optional(),
      provider: text('a provider alias').optional(),
      model: text('a model name').optional(),
      persona: text('a pack name').optional(),
      packs: z.array(text('a pack name'), expected('a list of pack names')).default([]),
      permission_mode: z.enum(PERMISSION_MODES, expected(`one of ${PERMISSION_MODES.join(', ')}`)).optional(),
      worktree: worktreeSettings.optional(),

      acp: acpSettings.optional(),
      agent: z.enum(ACP_PRESET_NAMES, expected(`an agent preset: one of ${ACP_PRESET_NAMES.join(', ')}`)).optional(),
      isolated: z.unknown().optional(),
      mcp: z.unknown().optional(),
    },
    expected('a mapping of raider settings'),
  )
  .superRefine((e, ctx) => {
    // Which agent runs is said once: by a command, or by a preset.
    if (e.acp !== undefined && e.agent !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['agent'], message: 'acp and agent exclude each other on one entry; keep one of them' });
    }
    const key = e.acp !== undefined ? 'acp' : e.agent !== undefined ? 'agent' : undefined;
    if (key === undefined) return;
    for (const builtIn of BUILT_IN_ONLY_KEYS) {
      const value = e[builtIn];
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [builtIn],
        message: `${builtIn} is a setting of the built-in raider; an entry with ${key} runs an ACP agent, which has none (remove ${builtIn} or ${key})`,
      });
    }
  })
  .nullable() // `bjorn:` with nothing under it is a raider with all defaults
  .transform((e): RaiderEntry => {
    if (e === null) return { packs: [], ignoredKeys: [] };
    const { isolated: _isolated, mcp: _mcp, worktree, ...rest } = e;
    const entry = worktree === undefined ? rest : { ...rest, worktree };
    return { ...entry, ignoredKeys: ['isolated', 'mcp'].filter((k) => k in e) };
  });

const cronJob = z.object(
  {
    id: text('a job id (a non-empty string)').optional(),
    name: name('a raider name'),
    cron: text('a cron expression'),
    mission: z.string(expected('a string')).default(''),
    coalesce: flag.default(false),
    catch_up: z.enum(['once', 'skip'], expected('"once" or "skip"')).default('once'),
    tz: text('a time zone name').refine(validTimeZone, expected('an IANA time zone such as Europe/Berlin')).optional(),
  },
  expected('a mapping (a cron job)'),
);

const cronJobs = z
  .array(cronJob, expected('a list of cron jobs'))
  .superRefine((jobs, ctx) => {
    const first = new Map<string, number>();
    jobs.forEach((job, i) => {
      const id = job.id ?? job.name;
      const j = first.get(id);
      if (j === undefined) {
        first.set(id, i);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: job.id === undefined ? [i] : [i, 'id'],
        message:
          `duplicate id ${JSON.stringify(id)}, also the id of cron[${j}]` +
          (job.id === undefined ? ' (the id defaults to the name; give one of them an id)' : ''),
      });
    });
  })
  .transform((jobs) => jobs.map(({ id, ...job }): CronJobConfig => ({ id: id ?? job.name, ...job })));

const telegramBot = z
  .object(
    {
      token: z.string(expected('a string (the bot token)', { hideValue: true })).optional(),
      allowlist: telegramIds.default([]),
      allowed_chats: telegramIds.default([]),
      routing: z
        .record(
          z.string().regex(/^(\*|-?\d+)$/),
          name('a raider name'),
          expected('a mapping of chat ids to raider names', { keyWhat: 'a chat id or "*"' }),
        )
        .default({}),
      api_root: url.optional(),
      questions: flag.default(false),
      questions_chat: telegramId.optional(),
      questions_thread: z.number(expected('a forum topic id (a positive integer)')).int().positive().optional(),
      auto_reply: flag.default(false),
    },
    expected('a mapping of bot settings'),
  )
  .nullable();

const telegram = z.object(
  {
    api_root: url.default(DEFAULT_TELEGRAM_API_ROOT),
    bots: z
      .record(name('a bot name'), telegramBot, expected('a mapping of bot names to bots', { keyWhat: `a bot name (${NAME_WHAT})` }))
      .default({}),
  },
  expected('a mapping'),
);

const hallConfigSchema = z.object(
  {
    longhouse: flag.default(false),
    preferred_lib_target: text('a directory path').nullable().default(null),
    raiders: z
      .record(
        name('a raider name'),
        raiderEntry,
        expected('a mapping of raider names to raider entries', { keyWhat: `a raider name (${NAME_WHAT})` }),
      )
      .default({}),
    cron: cronJobs.default([]),
    telegram: telegram.optional(),
    acp: z
      .object(
        {
          port: number('a port number (1-65535, or 0 for any free port)', (n) => Number.isInteger(n) && n >= 0 && n <= 65535)
            .nullable()
            .default(null),
          host: text('a host name or address').default('127.0.0.1'),
        },
        expected('a mapping'),
      )
      .prefault({}),
    logs: z.object({ keep_events: count.default(20), max_log_size: count.default(1048576) }, expected('a mapping')).prefault({}),
    cancel_grace: number('a number >= 0', (n) => n >= 0).default(5),
    worktree: z
      .object(
        {
          // Seconds, as every duration of this file; bytes, as logs.max_log_size.
          max_age: number('a number of seconds > 0', (n) => n > 0)
            .nullable()
            .default(null),
          max_disk: number('a number of bytes > 0', (n) => n > 0)
            .nullable()
            .default(null),
        },
        expected('a mapping (max_age, max_disk)'),
      )
      .prefault({}),
    permission_timeout: number('a number > 0', (n) => n > 0).default(120),
    mcp: z.object({ enable: flag.default(false) }, expected('a mapping')).prefault({}),
    dashboard: dashboard.optional(),
    questions: z
      .object({ dashboard: flag.default(false), socket: flag.default(false) }, expected('a mapping of faces to true or false'))
      .prefault({}),
    storage: z
      .object(
        {
          postgres: z
            .string(expected(POSTGRES_URL_WHAT))
            .regex(/^postgres(ql)?:\/\/\S+$/, expected(POSTGRES_URL_WHAT))
            .nullable()
            .default(null),
        },
        expected('a mapping'),
      )
      .prefault({}),
    cluster: name('a cluster name').default('default'),
    hall_id: text('a hall id (a non-empty string)').nullable().default(null),
    cluster_mode: z.enum(['alone', 'shared'], expected('"alone" or "shared"')).default('alone'),
    lease_seconds: number('a number of seconds >= 1', (n) => n >= 1).default(15),
    max_running: number('a whole number >= 1', (n) => Number.isInteger(n) && n >= 1)
      .nullable()
      .default(null),
  },
  expected('a mapping'),
);

// ---------------------------------------------------------------- shape walk

/** The schema a value is checked against, past optional/nullable/default/prefault and transforms. */
function core(schema: z.ZodType): z.ZodType {
  for (;;) {
    if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) schema = schema.unwrap() as z.ZodType;
    else if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) schema = schema.unwrap() as z.ZodType;
    else if (schema instanceof z.ZodPipe) schema = schema.in as z.ZodType;
    else return schema;
  }
}

/**
 * Walks the data along the schema: warns about (and drops) keys no object
 * schema declares, and drops `key: ~` where the key does not take null, so
 * an empty value counts as absent (its default applies).
 */
function prepare(schema: z.ZodType, value: unknown, path: PropertyKey[], warn: (w: string) => void): unknown {
  const s = core(schema);
  if (s instanceof z.ZodObject && isRecord(value)) {
    const shape = s.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const field = Object.hasOwn(shape, k) ? shape[k] : undefined;
      if (!field) warn(`unknown key ${keyPath([...path, k])} (ignored)`);
      else if (v !== null || field.safeParse(null).success) out[k] = prepare(field, v, [...path, k], warn);
    }
    return out;
  }
  if (s instanceof z.ZodRecord && isRecord(value)) {
    const vt = s.valueType as z.ZodType;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prepare(vt, v, [...path, k], warn)]));
  }
  if (s instanceof z.ZodArray && Array.isArray(value)) {
    return value.map((v, i) => prepare(s.element as z.ZodType, v, [...path, i], warn));
  }
  return value;
}

// ---------------------------------------------------------------- entry points

/** Parses and validates the text of a `.raider-hall.yml`; `file` only names it in messages. */
export function parseHallConfig(text: string, file: string): ConfigResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
  const where = (pos: readonly [number, number] | undefined): string => {
    if (!pos) return '';
    const { line, col } = lineCounter.linePos(pos[0]);
    return ` line ${line}, column ${col}:`;
  };
  if (doc.errors.length > 0) {
    return { ok: false, errors: doc.errors.map((e) => `${file}:${where(e.pos)} YAML syntax error: ${e.message}`) };
  }
  const warnings = doc.warnings.map((w) => `${file}:${where(w.pos)} ${w.message}`);

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    return { ok: false, errors: [`${file}: ${errorMessage(err)}`] };
  }
  if (!isRecord(data)) {
    return { ok: false, errors: [`${file}: expected a mapping of settings at the top level, got ${show(data)}`] };
  }

  const prepared = prepare(hallConfigSchema, data, [], (w) => warnings.push(`${file}: ${w}`));
  const parsed = hallConfigSchema.safeParse(prepared);
  const numbered = numberedRaiderKeys(doc, lineCounter).map(
    ({ key, line, col }) => `${file}: line ${line}, column ${col}: ${keyPath(['raiders', key])}: ${numberedKeyProblem(key)}`,
  );
  if (!parsed.success) {
    return {
      ok: false,
      errors: [...numbered, ...parsed.error.issues.map((i) => `${file}: ${keyPath(i.path) || '(top level)'}: ${i.message}`)],
    };
  }
  if (numbered.length > 0) return { ok: false, errors: numbered };

  const { telegram: tg, dashboard: board, questions, ...rest } = parsed.data;
  // dashboard.questions is the old home of questions.dashboard: it still works, and says where the key lives now.
  const rawBoard = data.dashboard;
  if (isRecord(rawBoard) && rawBoard.questions !== undefined) {
    warnings.push(`${file}: ${keyPath(['dashboard', 'questions'])}: moved to questions.dashboard (it still works here)`);
  }
  const dashboardAsks = questions.dashboard || (board?.questions ?? false);
  if (questions.dashboard && !board)
    warnings.push(`${file}: ${keyPath(['questions', 'dashboard'])}: no dashboard: section, so no dashboard asks`);
  const config: HallConfig = {
    ...rest,
    questions: { ...questions, dashboard: dashboardAsks },
    telegram: null,
    ...(board ? { dashboard: { ...board, questions: dashboardAsks } } : {}),
  };
  if (tg) {
    const bots: TelegramBotConfig[] = [];
    for (const [botName, bot] of Object.entries(tg.bots)) {
      if (!bot?.token) {
        warnings.push(`${file}: ${keyPath(['telegram', 'bots', botName])}: no token, bot skipped`);
        continue;
      }
      bots.push({ name: botName, ...bot, token: bot.token, api_root: bot.api_root ?? tg.api_root });
    }
    config.telegram = { api_root: tg.api_root, bots };
  }
  return { ok: true, config, warnings };
}

/**
 * A spawn of `1bjorn` runs in the singleton slot of the entry `bjorn`, so an
 * entry written as `1bjorn:` is never looked up: every run of it would use
 * the raider's defaults.
 */
function numberedKeyProblem(key: string): string {
  const base = NUMBERED_SLOT.exec(key)?.[2] ?? key;
  return (
    `a raider entry is named without a number: write ${base}: ` +
    `(${key} is the singleton slot of the entry ${base}; spawn ${key} to run it one mission at a time)`
  );
}

/** The keys of `raiders:` that are numbered names, with where each is written. */
function numberedRaiderKeys(doc: Document, lineCounter: LineCounter): Array<{ key: string; line: number; col: number }> {
  const raiders = doc.get('raiders', true);
  if (!isMap(raiders)) return [];
  const found: Array<{ key: string; line: number; col: number }> = [];
  for (const pair of raiders.items) {
    if (!isScalar(pair.key) || !NUMBERED_SLOT.test(String(pair.key.value))) continue;
    const { line, col } = lineCounter.linePos(pair.key.range?.[0] ?? 0);
    found.push({ key: String(pair.key.value), line, col });
  }
  return found;
}

/** The configuration of a hall without a config file. */
export function defaultHallConfig(): HallConfig {
  const result = parseHallConfig('', '(defaults)');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.config;
}
