-- Cron and Telegram on a shared cluster (docs/cluster.md, "Cron" and
-- "Telegram" under several halls).

-- One row per cron occurrence some hall fired (or coalesced). Every hall
-- computes the same occurrences; the first to insert (cluster, job, slot)
-- handles it, the others see the conflict and move on. The newest row per job
-- also tells a starting hall where the cluster is. Pruned after an hour,
-- except each job's newest.
CREATE TABLE raider_hall_cron_fires (
  cluster text        NOT NULL,
  job     text        NOT NULL,
  slot    timestamptz NOT NULL,
  hall    text        NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, job, slot)
);

-- Work one hall of the cluster does at a time (a Telegram bot's poll loop,
-- `telegram:BOT`): held by a hall while that hall's lease lives, taken by
-- another once it has expired.
CREATE TABLE raider_hall_roles (
  cluster text        NOT NULL,
  role    text        NOT NULL,
  hall    text        NOT NULL,
  since   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, role)
);
