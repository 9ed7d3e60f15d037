-- Operators' searches by kind and by error text (JobAdmin.list and count, the dashboard, the
-- endpoint), which read the table backwards or whole on a large table without them: a page of a rare
-- kind took 0.9-1.4 s, of a rare error text 2.2 s, on 10 million finished rows (docs/benchmarks.md).
--
-- (kind, id): a kind's jobs newest first, and their count from the index alone. One more entry per
-- insert; kind and id never change, so state changes stay heap-only updates as before.
-- Built CONCURRENTLY, outside a transaction (see the .conf file beside this one): enqueues, claims
-- and completions go on while it reads the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS pgqueue_jobs_kind_idx
    ON pgqueue_jobs (kind, id);

-- Jobs that carry an error: failed, cancelled after failing, and waiting for a retry (a completion
-- clears the error). Error-text searches read only these, newest first; completed jobs never enter.
CREATE INDEX CONCURRENTLY IF NOT EXISTS pgqueue_jobs_errors_idx
    ON pgqueue_jobs (id)
    WHERE last_error IS NOT NULL;
