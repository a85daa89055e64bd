/**
 * The layers point one way: machines are pure, adapters never reach into
 * the actors (the composition root), and no module imports itself back
 * through others. Imports are read with a regex over `import … from`,
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

function offences(from: string, forbidden: (spec: string) => boolean): string[] {
  return modules
    .filter((m) => m.file.startsWith(`${from}/`))
    .flatMap((m) => m.imports.filter(forbidden).map((spec) => `${m.file} imports ${spec}`));
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

  it('adapters never import from actors', () => {
    expect(offences('adapters', (spec) => spec.startsWith('actors/'))).toEqual([]);
  });

  it('machines import no node: module and nothing from adapters or actors', () => {
    expect(offences('machines', (spec) => spec.startsWith('node:') || spec.startsWith('adapters/') || spec.startsWith('actors/'))).toEqual(
      [],
    );
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
