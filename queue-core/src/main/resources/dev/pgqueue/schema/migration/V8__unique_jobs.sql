-- Unique jobs. A job enqueued with a unique key is the only unfinished job of its kind with that key:
-- the database refuses a second one through this index, whatever the number of instances, so no
-- enqueue has to read before it inserts. Jobs without a key are not in the index and pay nothing for
-- it. The column is added without a default, at once, without rewriting the table.
ALTER TABLE pgqueue_jobs ADD COLUMN unique_key text;

CREATE UNIQUE INDEX pgqueue_jobs_unique_idx
    ON pgqueue_jobs (kind, unique_key)
    WHERE unique_key IS NOT NULL AND state IN ('available', 'scheduled', 'running');

-- Keys held for a period ("at most once a day for this key"), finished jobs included. Kept in a table
-- of their own, so that pruning finished jobs (retention) cannot lift the guard before its period
-- ends; the cleaner deletes a key once its period is over. Recurring jobs hold each tick's key here.
CREATE TABLE pgqueue_unique_periods (
    kind         text        NOT NULL,
    unique_key   text        NOT NULL,
    period_start timestamptz NOT NULL,
    period_end   timestamptz NOT NULL,
    public_id    uuid        NOT NULL,
    PRIMARY KEY (kind, unique_key, period_start)
);

CREATE INDEX pgqueue_unique_periods_end_idx ON pgqueue_unique_periods (period_end);
