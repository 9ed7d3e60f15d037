-- What a job keeps of its runs: the attempts before its last one (start, end, outcome, error class and
-- message; never the payload), the value its listener returned, the snoozes it spent, and the tags it
-- was enqueued with.
--
-- Every column is added without a volatile default, so PostgreSQL records it in the catalog and
-- rewrites nothing: the ALTER holds its lock for milliseconds whatever the table's size. It still
-- needs that lock, and waits for transactions already using the table (a long batch, a held
-- snapshot's query); while it waits, new statements on the table queue behind it. The lock timeout
-- bounds that wait: the migration fails after it, nothing is changed, and the next start tries again.
SET LOCAL lock_timeout = '10s';

ALTER TABLE pgqueue_jobs
    ADD COLUMN attempts jsonb,
    ADD COLUMN output   jsonb,
    ADD COLUMN snoozes  integer NOT NULL DEFAULT 0,
    ADD COLUMN tags     text[];
