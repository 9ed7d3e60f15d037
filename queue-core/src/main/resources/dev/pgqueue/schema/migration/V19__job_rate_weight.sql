-- A job's own weight under the rate limits it falls under: how many units of each limit its start
-- uses, for a job that costs an external API several calls (a batch of 40 messages, say). NULL, the
-- usual case, leaves it to the kind's weight (1 unless configured).
--
-- The column has no default, so PostgreSQL records it in the catalog and rewrites nothing, and the
-- check is NOT VALID: it holds for every row written from now on without reading the rows already
-- there (which have no weight). The ALTER still needs the table's lock for a moment; the lock
-- timeout bounds the wait behind long transactions: after it the migration fails, changing nothing,
-- and the next start tries again.
SET LOCAL lock_timeout = '10s';

ALTER TABLE pgqueue_jobs
    ADD COLUMN IF NOT EXISTS rate_weight integer,
    ADD CONSTRAINT pgqueue_jobs_rate_weight_check CHECK (rate_weight >= 1) NOT VALID;
