-- Concurrency keys: jobs with the same key are limited together (per-key concurrency) and, on
-- queues ordered by key, start in enqueue order. A column without a default is added at once,
-- without rewriting the table; existing jobs have no key.
ALTER TABLE pgqueue_jobs ADD COLUMN concurrency_key text;

-- A key's unfinished jobs in enqueue order: whether a job has an unfinished predecessor of its key
-- (ordered keys) is one probe of this index. Jobs without a key are not in it.
CREATE INDEX pgqueue_jobs_key_order_idx
    ON pgqueue_jobs (queue, concurrency_key, id)
    WHERE concurrency_key IS NOT NULL AND state IN ('available', 'scheduled', 'running');
