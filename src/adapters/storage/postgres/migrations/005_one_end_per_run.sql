-- A run ends once in the cluster: one `raider.done` per run id. A hall that
-- stalled past its lease may still see its run end after another hall
-- reported it lost (or write back a report it relayed); the first end
-- written stands and the later one is not written. Keyed by run id and
-- mission id together: a run id names one run of one mission. See
-- docs/cluster.md, "Events across halls".
DELETE FROM raider_hall_events later USING raider_hall_events first
WHERE later.cluster = first.cluster AND later.id > first.id
  AND later.event->>'type' = 'raider.done' AND first.event->>'type' = 'raider.done'
  AND later.event->>'id' = first.event->>'id'
  AND coalesce(later.event->>'mission_id', '') = coalesce(first.event->>'mission_id', '');
CREATE UNIQUE INDEX raider_hall_events_one_end
  ON raider_hall_events (cluster, (event->>'id'), (coalesce(event->>'mission_id', '')))
  WHERE event->>'type' = 'raider.done';
