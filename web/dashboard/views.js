// The dashboard's pages beyond the runs: their routes (`#/tree`, `#/charts`,
// `#/sessions`, `#/sessions/ID`, `#/actors/ID`), the page for each, and the navigation
// between all of them.
import { h } from 'preact';
import htm from 'htm';
import { SessionPage, SessionsPage } from './sessions.js';
import { TreePage } from './tree.js';
import { ChartsPage } from './charts.js';
import { StatechartPage } from './statechart.js';

const html = htm.bind(h);

const PAGES = [
  { page: 'runs', hash: '#/', label: 'Runs' },
  { page: 'tree', hash: '#/tree', label: 'Tree' },
  { page: 'charts', hash: '#/charts', label: 'Charts' },
  { page: 'sessions', hash: '#/sessions', label: 'Sessions' },
];

/** The route of one of these pages, or null for the runs pages. */
export function viewRoute(hash) {
  const session = /^#\/sessions\/(.+)$/.exec(hash);
  if (session) return { page: 'session', id: decodeURIComponent(session[1]) };
  const actor = /^#\/actors\/(.+)$/.exec(hash);
  if (actor) return { page: 'actor', id: decodeURIComponent(actor[1]) };
  const page = PAGES.find((p) => p.page !== 'runs' && p.hash === hash);
  return page ? { page: page.page } : null;
}

export function Nav({ route }) {
  const current = route.page === 'run' ? 'runs' : route.page === 'session' ? 'sessions' : route.page === 'actor' ? 'tree' : route.page;
  return html`<nav aria-label="Pages">
    ${PAGES.map((p) => html`<a href=${p.hash} aria-current=${p.page === current ? 'page' : undefined}>${p.label}</a>`)}
  </nav>`;
}

export function ViewPage({ route, cluster }) {
  if (route.page === 'session') return html`<${SessionPage} id=${route.id} />`;
  if (route.page === 'sessions') return html`<${SessionsPage} />`;
  if (route.page === 'tree') return html`<${TreePage} cluster=${cluster} />`;
  if (route.page === 'charts') return html`<${ChartsPage} />`;
  if (route.page === 'actor') return html`<${StatechartPage} id=${route.id} />`;
  return null;
}
