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
  const edges = (node: AnyStateNode) => {
    const invokes = node.invoke.map((i) => (typeof i.src === 'string' ? i.src : 'actor'));
    const from = nodeName(node.id);
    const seen = new Set<string>();
    const add = (t: AnyTransitionDefinition, label: string) => {
      for (const target of t.target ?? []) {
        const line = `  ${from} --> ${nodeName(target.id)}: ${label}${guardLabel(t)}`;
        if (!seen.has(line)) lines.push(line);
        seen.add(line);
      }
    };
    if (node !== root) {
      for (const [eventType, list] of node.transitions) for (const t of list) add(t, eventLabel(eventType, invokes));
      for (const t of node.always ?? []) add(t, 'always');
    }
    for (const child of Object.values(node.states)) edges(child);
  };
  edges(root);
  return `${lines.join('\n')}\n`;
}
