-- Several halls on one cluster (cluster_mode: shared). A mission is claimed
-- only when it is the head of its serial slot (a numbered slot) and of its
-- binding, and no run of either lives: these two columns say which, so the
-- claim needs no JSON. See docs/cluster.md.
ALTER TABLE raider_hall_missions ADD COLUMN serial_slot text;
ALTER TABLE raider_hall_missions ADD COLUMN binding text;
ALTER TABLE raider_hall_missions ADD COLUMN claimed_at timestamptz;

-- Rows written before this migration: the same rules as the hall's names.
UPDATE raider_hall_missions SET
  serial_slot = CASE WHEN entry->>'name' ~ '^[0-9]+[a-z][-a-z0-9]*$' THEN entry->>'name' END,
  binding = COALESCE(entry->>'binding',
    CASE WHEN entry->>'name' ~ '^[0-9]+[a-z][-a-z0-9]*$' THEN 'slot:' || (entry->>'name') END);

CREATE INDEX raider_hall_missions_waiting ON raider_hall_missions (cluster, seq) WHERE state = 'waiting';
CREATE INDEX raider_hall_missions_serial ON raider_hall_missions (cluster, serial_slot, seq) WHERE serial_slot IS NOT NULL;
CREATE INDEX raider_hall_missions_binding ON raider_hall_missions (cluster, binding, seq) WHERE binding IS NOT NULL;
CREATE INDEX raider_hall_missions_claims ON raider_hall_missions (cluster, hall) WHERE state = 'claimed';
CREATE INDEX raider_hall_runs_slot ON raider_hall_runs (cluster, slot);
CREATE INDEX raider_hall_runs_binding ON raider_hall_runs (cluster, binding) WHERE binding IS NOT NULL;

-- The cluster's events: each hall writes the events of its bus here and
-- relays those of the others (NOTIFY is the doorbell; the table is the
-- truth, read from the last id seen). Pruned after a while.
CREATE TABLE raider_hall_events (
  cluster text        NOT NULL,
  id      bigserial,
  hall    text        NOT NULL,
  event   jsonb       NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, id)
);
CREATE INDEX raider_hall_events_at ON raider_hall_events (at);

-- A cancel or kill sent to one hall for a run on another: the owning hall
-- takes its rows (on the doorbell, or its next poll) and signals the raider
-- on its own host, escalating there as for any cancel.
CREATE TABLE raider_hall_signals (
  cluster text        NOT NULL,
  id      bigserial,
  hall    text        NOT NULL,
  run_id  text        NOT NULL,
  signal  text        NOT NULL CHECK (signal IN ('cancel', 'kill')),
  at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, id)
);
CREATE INDEX raider_hall_signals_hall ON raider_hall_signals (cluster, hall);

-- Run ids (`SLOT-TIME[.N]`) are made by each hall; in a shared cluster two
-- halls may start runs of one plain slot in the same second. A claim reserves
-- the run's id here, so ids stay unique across the cluster. Pruned after a day.
CREATE TABLE raider_hall_run_ids (
  cluster text   NOT NULL,
  slot    text   NOT NULL,
  sec     bigint NOT NULL,
  n       integer NOT NULL,
  PRIMARY KEY (cluster, slot, sec)
);
