-- Tagged jobs, found by tag (tags @> ARRAY['...']). Only rows with tags enter the index, so jobs
-- enqueued without any pay nothing for it. Built CONCURRENTLY, outside a transaction (see the .conf
-- file beside this one): enqueues, claims and completions go on while it reads the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS pgqueue_jobs_tags_idx
    ON pgqueue_jobs USING gin (tags)
    WHERE tags IS NOT NULL;
