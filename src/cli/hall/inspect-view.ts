/**
 * `raider hall inspect [DIR]`: the live actor tree of a hall in the terminal,
 * from the `inspect.*` stream of its event bus (a snapshot, then changes),
 * refreshed in place. `--once` prints one snapshot; `--json` the raw stream.
 */
import type { InspectedActor } from '../../adapters/inspect/actor-inspection.js';
import { formatAge, type Style } from './render.js';
import { hallSubscribe } from '../../protocol/hall-client.js';
import { InspectActor, InspectSnapshot, InspectState } from '../../protocol/events.js';
import type { z } from 'zod';

/** The tree as text: one line per actor, children indented under their parent. */
export function renderTree(actors: readonly InspectedActor[], now: number, style: Style): string {
  const children = new Map<string | null, InspectedActor[]>();
  for (const a of actors) {
    const list = children.get(a.parent) ?? [];
    list.push(a);
    children.set(a.parent, list);
  }
  const rows: Array<[string, string, string]> = [];
  const walk = (parent: string | null, prefix: string) => {
    const list = children.get(parent) ?? [];
    list.forEach((a, i) => {
      const last = i === list.length - 1;
      const branch = parent === null ? '' : last ? '└─ ' : '├─ ';
      const waiting = a.waiting ? ` (${a.waiting} waiting)` : '';
      const state = `${a.state}${a.status === 'active' ? '' : ` (${a.status})`}${waiting}`;
      rows.push([`${prefix}${branch}${a.id}`, state, formatAge(Math.max(0, (now - a.since) / 1000))]);
      const inner = parent === null ? prefix : `${prefix}${last ? '   ' : '│  '}`;
      const missions = a.missions ?? [];
      const hasChildren = (children.get(a.id) ?? []).length > 0;
      missions.forEach((m, j) => {
        const twig = j === missions.length - 1 && !hasChildren ? '└─ ' : '├─ ';
        rows.push([
          `${inner}${twig}${m.mission_id} (${m.name})`,
          m.state,
          m.since !== undefined ? formatAge(Math.max(0, (now - m.since) / 1000)) : '-',
        ]);
      });
      walk(a.id, inner);
    });
  };
  walk(null, '');
  const width = Math.max(0, ...rows.map((r) => r[0].length));
  const stateWidth = Math.max(0, ...rows.map((r) => r[1].length));
  return `${rows.map(([name, state, age]) => `${name.padEnd(width)}  ${style.cyan(state.padEnd(stateWidth))}  ${style.dim(age)}`).join('\n')}\n`;
}

/** The actor an `inspect.actor` or `inspect.state` event describes (its schema leaves the envelope out). */
function actorOf(data: z.infer<typeof InspectActor> | z.infer<typeof InspectState>): InspectedActor {
  const { type: _t, ...node } = data;
  return node;
}

/** Applies one inspect.* event to the tree; one that does not read as its schema says is left out. */
export function applyInspectEvent(tree: Map<string, InspectedActor>, event: Record<string, unknown>): void {
  switch (event.type) {
    case 'inspect.snapshot': {
      const snapshot = InspectSnapshot.safeParse(event);
      if (!snapshot.success) return;
      tree.clear();
      for (const a of snapshot.data.actors) tree.set(a.id, a);
      return;
    }
    case 'inspect.actor':
    case 'inspect.state': {
      const changed = (event.type === 'inspect.actor' ? InspectActor : InspectState).safeParse(event);
      if (changed.success) tree.set(changed.data.id, actorOf(changed.data));
      return;
    }
    case 'inspect.stopped':
      tree.delete(String(event.id));
      return;
  }
}

export interface InspectViewOptions {
  socketPath: string;
  once: boolean;
  json: boolean;
  style: Style;
  /** Where the tree goes: redrawn in place on a terminal, printed once per change otherwise. */
  out: { readonly isTTY?: boolean; write(text: string): unknown };
}

const REDRAW_MS = 250;

export async function inspectView(options: InspectViewOptions): Promise<number> {
  const tree = new Map<string, InspectedActor>();
  let got = false;
  let dirty = false;
  let ended = false;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  const finish = (code: number) => {
    ended = true;
    resolveDone(code);
  };
  const draw = () => {
    if (!dirty) return;
    dirty = false;
    const text = renderTree([...tree.values()], Date.now(), options.style);
    // Redraw in place on a terminal; append otherwise.
    options.out.write(options.out.isTTY ? `\x1b[H\x1b[2J${text}` : `${text}\n`);
  };
  const stop = await hallSubscribe(
    options.socketPath,
    'inspect.',
    (event) => {
      if (options.json) options.out.write(`${JSON.stringify(event)}\n`);
      else {
        applyInspectEvent(tree, event);
        dirty = true;
      }
      if (event.type === 'inspect.snapshot' && !got) {
        got = true;
        if (options.once) {
          if (!options.json) draw();
          finish(0);
        }
      }
    },
    () => {
      // The hall went away: a live view says so and fails; --once had its answer already.
      if (ended) return;
      if (got) process.stderr.write('raider hall inspect: the hall stopped\n');
      finish(1);
    },
  );
  const timer =
    options.once || options.json
      ? null
      : setInterval(() => {
          // A terminal is redrawn for its ages; a pipe or file gets the tree once per change.
          if (options.out.isTTY) dirty = true;
          draw();
        }, REDRAW_MS);
  const onSigint = () => finish(0);
  process.once('SIGINT', onSigint);
  const code = await done;
  process.off('SIGINT', onSigint);
  if (timer) clearInterval(timer);
  stop();
  return code;
}
