/**
 * A statechart picture of a machine, as Mermaid `stateDiagram-v2`, generated
 * from the machine definition itself so it never drifts from the code.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/** Mermaid ids must be simple: one per state node, from its path. */
function nodeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_]/g, '_');
}

function eventLabel(eventType: string, invokes: string[]): string {
  const done = /^xstate\.done\.actor\./.exec(eventType);
  if (done) return `done: ${invokes.join('/') || 'actor'}`;
  if (/^xstate\.error\.actor\./.test(eventType)) return `error: ${invokes.join('/') || 'actor'}`;
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  return eventType;
}

function guardLabel(t: AnyTransitionDefinition): string {
  const g = t.guard;
  if (!g) return '';
  const name = typeof g === 'string' ? g : typeof g === 'function' ? 'guard' : (g.type ?? 'guard');
  return ` [${name}]`;
}

export function mermaidChart(machine: AnyStateMachine): string {
  const lines = ['stateDiagram-v2'];
  const render = (node: AnyStateNode, indent: string) => {
    const children = Object.values(node.states);
    const first = node.initial?.target[0];
    if (first) {
      lines.push(
        `${indent}[*] --> ${nodeName(node.id)}.${first.key}`.replace(
          /\.([^.]+)$/,
          (_m, k: string) => `_${k.replace(/[^A-Za-z0-9_]/g, '_')}`,
        ),
      );
    }
    for (const child of children) {
      const name = nodeName(child.id);
      if (Object.keys(child.states).length > 0) {
        lines.push(`${indent}state "${child.key}" as ${name} {`);
        render(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${child.key}" as ${name}`);
      }
      if (child.type === 'final') lines.push(`${indent}${name} --> [*]`);
    }
  };
  const root: AnyStateNode = machine.root;
  render(root, '  ');
  // A state node's id is the machine's id and its path (no state of ours sets an id of its own).
  const idOf = (statePath: string) => nodeName(`${root.id}.${statePath}`);
  for (const edge of statechartGraph(machine).edges) lines.push(`  ${idOf(edge.from)} --> ${idOf(edge.to)}: ${edge.label}`);
  return `${lines.join('\n')}\n`;
}

/** A state of a statechart graph: its path (`alive.running`, '' for the root) and its children. */
export interface ChartState {
  path: string;
  key: string;
  final: boolean;
  /** The child entered first, when the state has children. */
  initial?: string;
  children: ChartState[];
}

/** A transition: from and to state paths, its label (`after cancelGrace [escalates]`). */
export interface ChartEdge {
  from: string;
  to: string;
  label: string;
}

/** The path of a state node below the machine (`run.alive.running` → `alive.running`). */
function pathOf(node: AnyStateNode): string {
  return node.path.join('.');
}

/**
 * The machine as states and labelled transitions, the same reading of its
 * definition as `mermaidChart`: the dashboard's statecharts are laid out from it.
 */
export function statechartGraph(machine: AnyStateMachine): { root: ChartState; edges: ChartEdge[] } {
  const root: AnyStateNode = machine.root;
  const state = (node: AnyStateNode): ChartState => {
    const first = node.initial?.target[0];
    return {
      path: pathOf(node),
      key: node.key,
      final: node.type === 'final',
      ...(first ? { initial: pathOf(first) } : {}),
      children: Object.values(node.states).map(state),
    };
  };
  const edges: ChartEdge[] = [];
  const seen = new Set<string>();
  const walk = (node: AnyStateNode) => {
    const invokes = node.invoke.map((i) => (typeof i.src === 'string' ? i.src : 'actor'));
    const add = (t: AnyTransitionDefinition, label: string) => {
      for (const target of t.target ?? []) {
        const edge = { from: pathOf(node), to: pathOf(target), label: `${label}${guardLabel(t)}` };
        const key = `${edge.from}\u0000${edge.to}\u0000${edge.label}`;
        if (!seen.has(key)) edges.push(edge);
        seen.add(key);
      }
    };
    if (node !== root) {
      for (const [eventType, list] of node.transitions) for (const t of list) add(t, eventLabel(eventType, invokes));
      for (const t of node.always ?? []) add(t, 'always');
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(root);
  return { root: state(root), edges };
}
