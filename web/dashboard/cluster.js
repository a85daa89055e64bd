// The halls of a shared cluster (several halls on one database): each with
// its host, its lease's age (time since its last renewal) and its runs. A hall that has no cluster to
// share shows nothing here. Hall ids and hosts are rendered as text.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { getJson, reportFailure, useEvery, useLiveBatch } from './live.js';

const html = htm.bind(h);
/** Leases age without events: look again this often. */
const REFRESH_MS = 5000;
/** Runs start and end on every hall: the running counts are asked for at most this often. */
const LOOK_AGAIN_MS = 1000;

/** The lease's age; an expired one says so (the hall waits to be taken over). */
function lease(hall) {
  const age = `renewed ${hall.lease_age.toFixed(1)} s ago`;
  return hall.lease_left >= 0 ? age : `${age}, expired`;
}

/** `cluster`: the page's first `/api/cluster` reply. */
export function HallsTable({ cluster }) {
  // Newer than the page's first reply once the table has looked again.
  const [fresh, setFresh] = useState(null);
  const [stamp, setStamp] = useState(0);
  const shared = cluster?.shared === true;
  useEffect(() => {
    if (!shared || stamp === 0) return undefined;
    let current = true;
    getJson('/api/cluster')
      .then((r) => current && setFresh(r))
      .catch(reportFailure);
    return () => {
      current = false;
    };
  }, [shared, stamp]);
  useEffect(() => {
    if (!shared) return undefined;
    const timer = setInterval(() => setStamp((n) => n + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, [shared]);
  const lookAgain = useEvery(LOOK_AGAIN_MS, () => setStamp((n) => n + 1));
  useLiveBatch(
    (batch) => {
      if (shared && batch.some((e) => e.type === 'raider.spawned' || e.type === 'raider.done')) lookAgain();
    },
    [shared],
  );
  const reply = fresh ?? cluster;
  if (!shared) return null;
  return html`<table aria-label="Halls" class="halls">
    <caption>Halls of the cluster</caption>
    <thead><tr><th>Hall</th><th>Host</th><th>Lease age</th><th>Running</th></tr></thead>
    <tbody>
      ${reply.halls.map(
        (hall) => html`<tr key=${hall.id}>
          <td>${hall.id}${hall.id === reply.hall ? ' (this hall)' : ''}</td>
          <td>${hall.host}</td>
          <td class=${hall.lease_left < 0 ? 'status failed' : ''}>${lease(hall)}</td>
          <td>${hall.running}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
