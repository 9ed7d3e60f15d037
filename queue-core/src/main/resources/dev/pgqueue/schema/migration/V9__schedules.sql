-- Recurring jobs. One row per schedule, shared by every instance on this table: the instance that
-- fires a tick locks the row (FOR UPDATE SKIP LOCKED), enqueues the tick's job and moves next_tick in
-- the same transaction, so a tick is fired once whatever the number of instances, and a crash before
-- the commit leaves the tick to the next pass. No leader, no clock but the database's.
CREATE TABLE pgqueue_schedules (
    name       text        PRIMARY KEY,
    cron       text        NOT NULL,
    zone       text        NOT NULL,
    kind       text        NOT NULL,
    queue      text        NOT NULL,
    payload    jsonb       NOT NULL,
    missed     text        NOT NULL,
    overlap    text        NOT NULL,
    next_tick  timestamptz NOT NULL,
    last_tick  timestamptz,
    last_job   uuid,
    paused_at  timestamptz,
    paused_by  text,
    declared   boolean     NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT pgqueue_schedules_missed_check CHECK (missed IN ('LATEST', 'ALL', 'NONE')),
    CONSTRAINT pgqueue_schedules_overlap_check CHECK (overlap IN ('ALLOW', 'SKIP'))
);

-- What the tick pass reads: the running schedules whose next tick is due.
CREATE INDEX pgqueue_schedules_due_idx ON pgqueue_schedules (next_tick) WHERE paused_at IS NULL;
