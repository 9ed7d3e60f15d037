-- Claims that share a queue's workers fairly across concurrency keys (fair-by-key) read each key's
-- next due jobs in the queue's order: this index holds exactly those, per queue and key. Only jobs
-- with a key are in it, so queues without keys pay nothing for it. It also serves the list of keys
-- with due jobs, read by skipping from one key to the next.
--
-- Built CONCURRENTLY, outside a transaction, so that upgrading a table that holds jobs blocks no writer.
CREATE INDEX CONCURRENTLY IF NOT EXISTS pgqueue_jobs_key_claim_idx
    ON pgqueue_jobs (queue, concurrency_key, priority DESC, run_at, id)
    WHERE state = 'available' AND concurrency_key IS NOT NULL;
