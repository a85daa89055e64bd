-- Permission questions across the halls of a shared cluster: a raider asks
-- the hall that runs it, and the person who answers may be connected to
-- another hall (an ACP client). See docs/cluster.md, "ACP across halls".

-- Which hall answers for a binding now: the hall an ACP session is open on
-- answers for `acp:SESSION`. A hall's rows go when it stops or joins again;
-- a lost hall's rows count for nothing once its lease has expired.
CREATE TABLE raider_hall_answerers (
  cluster text        NOT NULL,
  binding text        NOT NULL,
  hall    text        NOT NULL,
  since   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, binding)
);

-- A question of a run whose binding a hall other than the run's answers for.
-- `hall` is the run's hall (the asker); `answer` ({answer, reason, face}) is
-- null while the question is open, and the first answer written stands.
CREATE TABLE raider_hall_questions (
  cluster     text        NOT NULL,
  id          text        NOT NULL,
  run_id      text        NOT NULL,
  binding     text        NOT NULL,
  hall        text        NOT NULL,
  question    jsonb       NOT NULL,
  answer      jsonb,
  asked_at    timestamptz NOT NULL DEFAULT now(),
  answered_at timestamptz,
  PRIMARY KEY (cluster, id)
);
CREATE INDEX raider_hall_questions_open ON raider_hall_questions (cluster, binding) WHERE answer IS NULL;
