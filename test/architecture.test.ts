/**
 * The floors of src/ point one way, as the table below (and the one in
 * docs/architecture.md) says: each floor imports only the floors it lists,
 * machines are pure, and no module imports itself back through others. Imports are read with a regex over `import … from`,
 * `export … from`, bare `import '…'` and `import('…')`; type-only imports
 * count too, because a type cycle still ties the modules' meanings together
 * and makes neither understandable alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './support/test-hall.js';

const SRC = path.join(REPO, 'src');

interface Module {
  /** Relative to src/, with its .ts ending. */
  file: string;
  /** What it imports: src/ modules as their `file`, packages and `node:` modules as written. */
  imports: string[];
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function readModule(full: string): Module {
  const text = fs.readFileSync(full, 'utf8');
  const imports = [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[1] ?? m[2] ?? '';
    if (!spec.startsWith('.')) return spec;
    return path.relative(SRC, path.resolve(path.dirname(full), spec)).replace(/\.js$/, '.ts');
  });
  return { file: path.relative(SRC, full), imports };
}

const modules = sourceFiles(SRC).map(readModule);

/** The floors of src/, lowest first, and what each may import besides itself. */
const MAY_IMPORT = {
  domain: [],
  os: ['domain'],
  protocol: ['domain', 'os'],
  machines: ['domain', 'protocol'],
  ports: ['domain', 'protocol', 'machines'],
  adapters: ['domain', 'os', 'protocol', 'machines', 'ports'],
  actors: ['domain', 'os', 'protocol', 'machines', 'ports', 'adapters'],
  cli: ['domain', 'os', 'protocol', 'machines', 'ports', 'adapters', 'actors'],
  // The built-in raider is a program of its own: the hall reaches it only by running it.
  raider: ['domain', 'os', 'protocol'],
  // So is the ACP bridge, the raider of an entry with an ACP agent (docs/agents.md).
  'acp-raider': ['domain', 'os', 'protocol'],
} as const satisfies Record<string, readonly string[]>;
type Floor = keyof typeof MAY_IMPORT;

/**
 * The arrows the table does not hold: the `raider` command's entry hands
 * every call that is not one of its own commands to the built-in raider,
 * and `raider acp-client` to the ACP bridge.
 */
const DOORS: readonly { file: string; floor: Floor }[] = [
  { file: 'cli/main.ts', floor: 'raider' },
  { file: 'cli/main.ts', floor: 'acp-raider' },
];

function isFloor(name: string): name is Floor {
  return Object.hasOwn(MAY_IMPORT, name);
}

function floorOf(file: string): Floor | undefined {
  const top = file.split('/')[0] ?? '';
  return isFloor(top) ? top : undefined;
}

/** Every import of a module of ours that its floor may not make, as `file imports target`. */
function wrongArrows(list: readonly Module[]): string[] {
  return list.flatMap((m) => {
    const from = floorOf(m.file);
    if (!from) return [`${m.file} is on no floor`];
    const allowed: readonly string[] = MAY_IMPORT[from];
    return m.imports
      .filter((spec) => spec.endsWith('.ts'))
      .filter((spec) => {
        const to = floorOf(spec);
        if (to === from) return false;
        if (to && allowed.includes(to)) return false;
        return !DOORS.some((door) => door.file === m.file && door.floor === to);
      })
      .map((spec) => `${m.file} imports ${spec}`);
  });
}

/** Every cycle found by a depth-first walk over src/ modules, each as the path that closes it. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the layers of src/', () => {
  it('reads the imports of every module (the check below sees something)', () => {
    expect(modules.length).toBeGreaterThan(50);
    const root = modules.find((m) => m.file === 'actors/hall-supervisor.ts');
    expect(root?.imports).toContain('machines/hall.machine.ts');
  });

  it('every import of src/ goes down the table of floors', () => {
    expect(wrongArrows(modules)).toEqual([]);
  });

  it('finds a wrong arrow when there is one', () => {
    const list: Module[] = [
      { file: 'protocol/client.ts', imports: ['adapters/os/socket.ts', 'domain/names.ts', 'node:net'] },
      { file: 'actors/prepare.ts', imports: ['raider/journal.ts', 'ports/store.ts'] },
      { file: 'cli/main.ts', imports: ['raider/cli.ts'] },
      { file: 'raider/cli.ts', imports: ['cli/main.ts', 'os/pipe.ts'] },
    ];
    expect(wrongArrows(list)).toEqual([
      'protocol/client.ts imports adapters/os/socket.ts',
      'actors/prepare.ts imports raider/journal.ts',
      'raider/cli.ts imports cli/main.ts',
    ]);
  });

  it('docs/architecture.md shows the same table', () => {
    const doc = fs.readFileSync(path.join(REPO, 'docs', 'architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `src\/([\w-]+)\/` \|[^\n]*\| ([^|\n]*) \|$/gm)].map((m) => {
      const [, floor = '', may = ''] = m;
      // The door of the cli floor is named after a semicolon, not as one of its floors.
      const floors = [...(may.split(';')[0] ?? '').matchAll(/`([\w-]+)`/g)].map((f) => f[1]);
      return [floor, floors];
    });
    expect(Object.fromEntries(rows)).toEqual(MAY_IMPORT);
  });

  it('machines import no node: module', () => {
    const offences = modules
      .filter((m) => floorOf(m.file) === 'machines')
      .flatMap((m) => m.imports.filter((spec) => spec.startsWith('node:')));
    expect(offences).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'node:fs']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('no module imports itself back through others', () => {
    const graph = new Map(modules.map((m) => [m.file, m.imports.filter((spec) => spec.endsWith('.ts'))]));
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });
});
