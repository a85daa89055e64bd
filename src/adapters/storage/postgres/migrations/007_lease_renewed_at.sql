-- When each hall last renewed its lease: the dashboard's Halls table shows
-- the lease's age (time since that renewal), which `lease_until` alone does
-- not give when halls have different `lease_seconds`. A hall already in the
-- table takes the migration's time until its next renewal (within a third
-- of its lease). See docs/cluster.md and docs/dashboard.md.
ALTER TABLE raider_hall_halls ADD COLUMN renewed_at timestamptz NOT NULL DEFAULT now();
