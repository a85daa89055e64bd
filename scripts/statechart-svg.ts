/**
 * Lays out every machine's statechart with ELK (part of `npm run build`) and
 * writes it as static SVG, one file per machine, named by its id:
 *
 *   dist/web/statecharts/run.svg, slot.svg, bindingQueue.svg, ...
 *
 * Each state is a `<g class="sc-state" data-state="alive.running"
 * aria-label="alive.running">` holding its box, its name and its children;
 * each transition a path with its label (event, `after cancelGrace`, guards
 * in brackets). The dashboard serves the files and the page only marks the
 * current states (docs/dashboard.md, "Statecharts"): the layout is done
 * here, so the browser loads no layout engine. Colours come from the
 * dashboard's style sheet (views.css); the attributes here are plain defaults
 * for the file opened on its own.
 *
 *   node --import tsx scripts/statechart-svg.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import elk, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { AnyStateMachine } from 'xstate';
import { type ChartState, statechartGraph } from '../src/cli/statechart.js';
import { MACHINES } from './machine-list.js';

// A CommonJS module whose types say `export default`: under NodeNext its default is in `.default`.
const ELK = elk.default;

const OUT = fileURLToPath(new URL('../dist/web/statecharts/', import.meta.url));

/** Rough text widths of the dashboard's sans-serif at the sizes used (no font metrics at build time). */
const STATE_CHAR = 7.4;
const LABEL_CHAR = 6.1;
const STATE_HEIGHT = 30;
const LABEL_HEIGHT = 14;
const INITIAL = 10;
const PAD_TOP = 30;

const stateId = (p: string) => `s:${p}`;
const initialId = (p: string) => `i:${p}`;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function elkNode(state: ChartState): ElkNode {
  if (state.children.length === 0)
    return { id: stateId(state.path), width: Math.max(64, state.key.length * STATE_CHAR + 24), height: STATE_HEIGHT };
  const children = state.children.map(elkNode);
  if (state.initial !== undefined) children.unshift({ id: initialId(state.path), width: INITIAL, height: INITIAL });
  return {
    id: stateId(state.path),
    layoutOptions: {
      'elk.padding': `[top=${PAD_TOP},left=14,bottom=14,right=14]`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      'elk.nodeSize.minimum': `(${state.key.length * STATE_CHAR + 40},${PAD_TOP + 20})`,
    },
    children,
  };
}

function initialEdges(state: ChartState): ElkExtendedEdge[] {
  const own: ElkExtendedEdge[] =
    state.initial !== undefined
      ? [{ id: `e:init:${state.path}`, sources: [initialId(state.path)], targets: [stateId(state.initial)] }]
      : [];
  return [...own, ...state.children.flatMap(initialEdges)];
}

interface Placed {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Absolute boxes of every node (ELK gives each relative to its parent). */
function placements(node: ElkNode, dx: number, dy: number, into: Map<string, Placed>): void {
  for (const child of node.children ?? []) {
    const x = dx + (child.x ?? 0);
    const y = dy + (child.y ?? 0);
    into.set(child.id, { x, y, width: child.width ?? 0, height: child.height ?? 0 });
    placements(child, x, y, into);
  }
}

const f = (n: number) => String(Math.round(n * 10) / 10);

function stateSvg(state: ChartState, boxes: Map<string, Placed>, indent: string): string[] {
  const box = boxes.get(stateId(state.path));
  if (!box) return [];
  const compound = state.children.length > 0;
  const cls = `sc-state${compound ? ' sc-compound' : ''}${state.final ? ' sc-final' : ''}`;
  const lines = [
    `${indent}<g class="${cls}" data-state="${escapeXml(state.path)}" aria-label="${escapeXml(state.path)}">`,
    `${indent}  <rect x="${f(box.x)}" y="${f(box.y)}" width="${f(box.width)}" height="${f(box.height)}" rx="6" fill="#fff" stroke="#555"/>`,
  ];
  if (state.final)
    lines.push(
      `${indent}  <rect class="sc-final-ring" x="${f(box.x + 3)}" y="${f(box.y + 3)}" width="${f(box.width - 6)}" height="${f(box.height - 6)}" rx="4" fill="none" stroke="#555"/>`,
    );
  const tx = compound ? box.x + 10 : box.x + box.width / 2;
  const ty = compound ? box.y + 19 : box.y + box.height / 2 + 4.5;
  lines.push(
    `${indent}  <text x="${f(tx)}" y="${f(ty)}"${compound ? '' : ' text-anchor="middle"'} font-size="13" font-family="sans-serif">${escapeXml(state.key)}</text>`,
  );
  const initial = boxes.get(initialId(state.path));
  if (initial)
    lines.push(
      `${indent}  <circle class="sc-initial" cx="${f(initial.x + INITIAL / 2)}" cy="${f(initial.y + INITIAL / 2)}" r="${INITIAL / 2}" fill="#555"/>`,
    );
  for (const child of state.children) lines.push(...stateSvg(child, boxes, `${indent}  `));
  lines.push(`${indent}</g>`);
  return lines;
}

function edgeSvg(edge: ElkExtendedEdge, label: string | undefined): string[] {
  const lines: string[] = [];
  for (const section of edge.sections ?? []) {
    const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${f(p.x)},${f(p.y)}`).join(' ');
    lines.push(`    <path class="sc-edge" d="${d}" fill="none" stroke="#777" marker-end="url(#sc-arrow)"/>`);
  }
  for (const l of edge.labels ?? [])
    lines.push(
      `    <text class="sc-label" x="${f((l.x ?? 0) + 2)}" y="${f((l.y ?? 0) + LABEL_HEIGHT - 3)}" font-size="11" font-family="sans-serif" fill="#333">${escapeXml(label ?? l.text ?? '')}</text>`,
    );
  return lines;
}

/** The SVG text of one machine's statechart. */
export async function statechartSvg(machine: AnyStateMachine): Promise<string> {
  const { root, edges } = statechartGraph(machine);
  const labelled: ElkExtendedEdge[] = edges.map((e, i) => ({
    id: `e:${i}`,
    sources: [stateId(e.from)],
    targets: [stateId(e.to)],
    labels: [{ text: e.label, width: e.label.length * LABEL_CHAR + 4, height: LABEL_HEIGHT }],
  }));
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.json.edgeCoords': 'ROOT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.spacing.nodeNode': '28',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
    },
    children: [
      ...(root.initial !== undefined ? [{ id: initialId(''), width: INITIAL, height: INITIAL }] : []),
      ...root.children.map(elkNode),
    ],
    edges: [...initialEdges(root), ...labelled],
  };
  const laid = await new ELK().layout(graph);
  const boxes = new Map<string, Placed>();
  placements(laid, 0, 0, boxes);
  const labels = new Map(labelled.map((e, i) => [e.id, edges[i]?.label]));
  const width = laid.width ?? 0;
  const height = laid.height ?? 0;
  const rootInitial = boxes.get(initialId(''));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="statechart" data-machine="${escapeXml(machine.id)}" viewBox="0 0 ${f(width)} ${f(height)}" width="${f(width)}" height="${f(height)}">`,
    '  <defs><marker id="sc-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto"><path class="sc-arrowhead" d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>',
    '  <g class="sc-states">',
    ...(rootInitial
      ? [
          `    <circle class="sc-initial" cx="${f(rootInitial.x + INITIAL / 2)}" cy="${f(rootInitial.y + INITIAL / 2)}" r="${INITIAL / 2}" fill="#555"/>`,
        ]
      : []),
    ...root.children.flatMap((child) => stateSvg(child, boxes, '    ')),
    '  </g>',
    '  <g class="sc-edges">',
    ...(laid.edges ?? []).flatMap((e: ElkExtendedEdge) => edgeSvg(e, labels.get(e.id))),
    '  </g>',
    '</svg>',
    '',
  ].join('\n');
}

export async function writeStatecharts(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  for (const [, , machine] of MACHINES) fs.writeFileSync(path.join(OUT, `${machine.id}.svg`), await statechartSvg(machine));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeStatecharts();
}
