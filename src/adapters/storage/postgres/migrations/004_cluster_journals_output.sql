-- What a hall of a shared cluster writes on its own host and the other halls
-- need: a binding's session journal (its next mission may run on another
-- hall) and what a run writes (`attach` and `logs` from any hall). Both are
-- append-only files, kept here as the bytes appended, in order, each row one
-- piece starting at a byte offset. See docs/cluster.md.

-- A session's journal (`.raider/sessions/ID.jsonl`): the hall that ran a run
-- of the session writes what the run appended before the run's end frees its
-- binding; the hall that runs the next one brings its own copy up to date.
CREATE TABLE raider_hall_journal_chunks (
  cluster text        NOT NULL,
  session text        NOT NULL,
  start   bigint      NOT NULL,
  data    bytea       NOT NULL,
  hall    text        NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, session, start)
);

-- A run's events file (`events`) and its lines of the slot log (`log`), as
-- the run goes and complete before its raider.done reaches the other halls.
-- Pruned a day after they were written.
CREATE TABLE raider_hall_run_output (
  cluster text        NOT NULL,
  run_id  text        NOT NULL,
  stream  text        NOT NULL CHECK (stream IN ('events', 'log')),
  start   bigint      NOT NULL,
  data    bytea       NOT NULL,
  hall    text        NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, run_id, stream, start)
);
CREATE INDEX raider_hall_run_output_at ON raider_hall_run_output (at);
