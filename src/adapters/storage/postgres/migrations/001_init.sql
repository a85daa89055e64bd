-- The hall's durable state on PostgreSQL. Every row belongs to a cluster: the
-- halls sharing one database and its queues. Several clusters (projects) may
-- share one database. See docs/cluster.md.

-- The halls of each cluster, with the lease each renews while it lives.
-- Expiries are the database's now(), never a host clock.
CREATE TABLE raider_hall_halls (
  cluster     text        NOT NULL,
  id          text        NOT NULL,
  host        text        NOT NULL,
  root        text        NOT NULL,
  pid         integer     NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz NOT NULL,
  PRIMARY KEY (cluster, id)
);

-- Waiting missions. A queue is a numbered slot or a binding; its order is
-- `seq` (one sequence for all queues: FIFO within a queue, gaps allowed).
-- A mission moved to another queue takes a new seq (it goes to the tail).
CREATE SEQUENCE raider_hall_mission_seq;

CREATE TABLE raider_hall_missions (
  cluster    text        NOT NULL,
  id         text        NOT NULL,
  queue_kind text        NOT NULL CHECK (queue_kind IN ('slot', 'binding')),
  queue_key  text        NOT NULL,
  seq        bigint      NOT NULL,
  -- 'waiting' until a hall claims the queue's head; claims come with several halls.
  state      text        NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'claimed')),
  hall       text,
  entry      jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, id)
);
CREATE INDEX raider_hall_missions_queue ON raider_hall_missions (cluster, queue_kind, queue_key, seq);

-- The run ledger: runs that left their queue and whose end is not yet
-- reported, with the hall that runs them.
CREATE TABLE raider_hall_runs (
  cluster    text        NOT NULL,
  id         text        NOT NULL,
  hall       text        NOT NULL,
  slot       text        NOT NULL,
  binding    text,
  mission_id text        NOT NULL,
  pid        integer,
  started_at timestamptz NOT NULL DEFAULT now(),
  record     jsonb       NOT NULL,
  PRIMARY KEY (cluster, id)
);
CREATE INDEX raider_hall_runs_hall ON raider_hall_runs (cluster, hall);

-- The session each binding continues.
CREATE TABLE raider_hall_sessions (
  cluster    text        NOT NULL,
  binding    text        NOT NULL,
  session    text        NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, binding)
);

-- Small facts adapters keep (cron's last fired slot, a Telegram bot's offset).
CREATE TABLE raider_hall_kv (
  cluster text  NOT NULL,
  ns      text  NOT NULL,
  key     text  NOT NULL,
  value   jsonb NOT NULL,
  PRIMARY KEY (cluster, ns, key)
);
