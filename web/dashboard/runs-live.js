// The Runs table kept up to date from the bus events the page already
// receives, instead of asking the hall for the runs again on each change: a
// burst of missions with pages open then costs the hall its events, not a
// request per page every few frames (each request re-lists the live runs and
// the kept events files). A `raider.spawned` adds a running row, a
// `raider.done` ends it; what the events cannot say (a Status or Text
// filter, which needs the run's end or mission; the hall's restart; a run
// this page never listed that would show) makes the page ask again.

/** Run ids are `SLOT-SECONDS[.N]`: when a run started, to the second, and which run of that second it was (1 without `.N`). */
function cursorOf(id) {
  const m = /-(\d+)(?:\.(\d+))?$/.exec(id);
  return m ? { sec: Number(m[1]), n: m[2] === undefined ? 1 : Number(m[2]) } : null;
}

/**
 * The table's order, as the hall's: running runs first, then the others;
 * newest first in each. Runs of one start time (a past run whose raider
 * wrote no time starts on its id's second) by their ids: `.10` is newer
 * than `.9` (which text order would not say).
 */
function order(a, b) {
  return (b.status === 'running') - (a.status === 'running') || b.started_at - a.started_at || newerId(a.id, b.id);
}

/** Two runs of one start time by their ids (parsed only then: a polled batch sorts hundreds of rows). */
function newerId(a, b) {
  const x = cursorOf(a);
  const y = cursorOf(b);
  return (y?.sec ?? 0) - (x?.sec ?? 0) || (y?.n ?? 1) - (x?.n ?? 1) || (a < b ? 1 : a > b ? -1 : 0);
}

function raiderMatches(filter, slot) {
  return !filter.raider || slot === filter.raider || slot.replace(/^\d+/, '') === filter.raider;
}

/** True when the events alone can keep the table right for this filter. */
export function followsEvents(filter) {
  return filter.status === '' && filter.text === '';
}

/**
 * Applies one frame's events to the table `runs` (`{runs, total, limit}`, as
 * /api/runs answered). Returns the new table (the same object when nothing
 * changed) and whether to ask the hall again. `hall`: in a shared cluster,
 * this hall's id, for events that do not name theirs. `pushedOut` (a Map the
 * page keeps, id → row) holds the rows newer runs pushed off the table, kept
 * up to date by their ends: each batch takes back those that sort among the
 * shown again, without asking the hall (in a burst most runs end after fifty
 * newer ones started).
 */
export function applyRunEvents(runs, batch, filter, hall, pushedOut = new Map()) {
  let rows = null;
  let total = runs.total;
  let lookAgain = false;
  // Where each run is in `rows` (or, before any edit, in runs.runs): a polled batch holds hundreds of runs, each looked up.
  const at = new Map(runs.runs.map((r, i) => [r.id, i]));
  const edit = () => {
    rows ??= [...runs.runs];
    return rows;
  };
  for (const e of batch) {
    if (typeof e.type !== 'string') continue;
    if (e.type.startsWith('hall.') || e.type === 'raider.resync') {
      lookAgain = true;
    } else if (e.type === 'raider.spawned' && typeof e.id === 'string' && typeof e.slot === 'string') {
      if (!raiderMatches(filter, e.slot) || at.has(e.id)) continue;
      const where = e.hall ?? hall;
      at.set(e.id, edit().length);
      edit().push({
        id: e.id,
        slot: e.slot,
        status: 'running',
        started_at: Math.round(Number(e.time) * 1000),
        duration: null,
        ...(typeof e.pid === 'number' ? { pid: e.pid } : {}),
        ...(typeof e.mission_id === 'string' ? { mission_id: e.mission_id } : {}),
        ...(where ? { hall: where } : {}),
      });
      total++;
    } else if (e.type === 'raider.done' && typeof e.id === 'string') {
      const list = rows ?? runs.runs;
      const place = at.get(e.id);
      const out = place === undefined && typeof e.slot === 'string' && raiderMatches(filter, e.slot) ? pushedOut.get(e.id) : undefined;
      if (place !== undefined || out !== undefined) {
        const row = out ?? list[place];
        if (row.status !== 'running') continue;
        const { pid: _pid, ...rest } = row;
        const ended = {
          ...rest,
          status: typeof e.status === 'string' ? e.status : 'failed',
          duration: Math.max(0, (Number(e.time) * 1000 - row.started_at) / 1000),
          ...(typeof e.error === 'string' ? { error: e.error } : {}),
        };
        if (out === undefined) edit()[place] = ended;
        else {
          // Still off the table, ended: the last step below takes it back if it sorts among the shown.
          pushedOut.set(e.id, ended);
          edit();
        }
      } else if (typeof e.slot === 'string' && raiderMatches(filter, e.slot)) {
        // A run this page does not list: it shows only when it is not older than every row shown.
        const second = cursorOf(e.id)?.sec ?? null;
        const oldest = list.length > 0 ? Math.min(...list.map((r) => r.started_at)) : 0;
        if (list.length < runs.limit || second === null || second * 1000 >= oldest - 1000) lookAgain = true;
      }
    }
  }
  if (rows === null) return { runs, lookAgain };
  rows.sort(order);
  // Rows pushed off earlier come back when room opens above them, as the hall would list them: more
  // than a table of runs ran at once, the newer ones ended first (off the table, below the running
  // ones), then the older ones ended too.
  // (No row is both shown and remembered: each batch ends by forgetting the shown ones.)
  const last = rows[runs.limit - 1];
  const back = [...pushedOut.values()].filter((row) => last === undefined || order(row, last) < 0);
  if (back.length > 0) {
    rows.push(...back);
    rows.sort(order);
  }
  for (const row of rows.slice(0, runs.limit)) pushedOut.delete(row.id);
  for (const row of rows.slice(runs.limit)) remember(pushedOut, row);
  return { runs: { ...runs, runs: rows.slice(0, runs.limit), total }, lookAgain };
}

/** Rows pushed off the table that a page remembers at most: the oldest are forgotten (their end then asks the hall). */
const PUSHED_OUT_KEPT = 2000;

function remember(pushedOut, row) {
  pushedOut.delete(row.id);
  pushedOut.set(row.id, row);
  if (pushedOut.size > PUSHED_OUT_KEPT) pushedOut.delete(pushedOut.keys().next().value);
}

/** Missions a page remembers at most, by mission id and by run id. */
const MISSIONS_KEPT = 2000;

function keep(map, key, value) {
  map.set(key, value);
  if (map.size > MISSIONS_KEPT) map.delete(map.keys().next().value);
}

/**
 * The missions a batch tells (`dashboard.spawn` carries its text and mission
 * id; `raider.spawned`, the run's, carries only the id), into `known`:
 * `{byMission, byRun}`, two Maps the page keeps.
 */
export function noteMissions(batch, known) {
  for (const e of batch) {
    if (e.type === 'dashboard.spawn' && typeof e.mission_id === 'string' && typeof e.mission === 'string')
      keep(known.byMission, e.mission_id, e.mission);
  }
}

/**
 * The table with the missions its rows lack filled from `known` (the same
 * object when none was), and the ids of the rows still without one: those
 * the page may ask the hall for (`/api/missions`).
 */
export function fillMissions(runs, known) {
  let rows = null;
  const missing = [];
  runs.runs.forEach((row, i) => {
    if (row.mission !== undefined) return;
    const mission = known.byRun.get(row.id) ?? (row.mission_id !== undefined ? known.byMission.get(row.mission_id) : undefined);
    // Only rows the events made (they carry the mission id) are asked for: the hall's own rows say all it knows.
    if (mission === undefined) {
      if (row.mission_id !== undefined) missing.push(row.id);
    } else {
      rows ??= [...runs.runs];
      rows[i] = { ...row, mission };
    }
  });
  return { runs: rows === null ? runs : { ...runs, runs: rows }, missing };
}

/** Notes the hall's answer to `/api/missions` in `known`. */
export function noteAnswer(reply, known) {
  for (const [id, mission] of Object.entries(reply.missions ?? {})) keep(known.byRun, id, mission);
}
