-- The jobs table holds the working set of the queue, not its archive: finished rows are pruned
-- after their retention period. Flyway runs this with search_path set to the configured schema.

CREATE TABLE pgqueue_jobs (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    public_id    uuid        NOT NULL,
    kind         text        NOT NULL,
    queue        text        NOT NULL,
    payload      jsonb       NOT NULL,
    state        text        NOT NULL,
    priority     smallint    NOT NULL DEFAULT 0,
    run_at       timestamptz NOT NULL DEFAULT now(),
    attempt      integer     NOT NULL DEFAULT 0,
    max_attempts integer     NOT NULL,
    lease_owner  text,
    lease_until  timestamptz,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    finished_at  timestamptz,
    CONSTRAINT pgqueue_jobs_public_id_key UNIQUE (public_id),
    CONSTRAINT pgqueue_jobs_state_check
        CHECK (state IN ('available', 'scheduled', 'running', 'completed', 'failed')),
    CONSTRAINT pgqueue_jobs_attempt_check CHECK (attempt >= 0 AND max_attempts > 0),
    CONSTRAINT pgqueue_jobs_lease_check CHECK (state <> 'running' OR lease_until IS NOT NULL)
) WITH (
    -- Room on each page for the new versions of updated rows, so that updates which touch no
    -- indexed column (lease extensions) stay heap-only.
    fillfactor = 70,
    -- Every job leaves dead tuples behind; vacuum at 1 % churn instead of the default 20 %, and let
    -- it work harder and pause less.
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_limit = 2000,
    autovacuum_vacuum_cost_delay = 2
);

-- The claim index: exactly the claim query's predicate and order, holding only due rows. A row
-- leaves it the moment it is claimed, scheduled for later or finished, so it stays small however
-- many finished or future jobs the table keeps.
CREATE INDEX pgqueue_jobs_claim_idx
    ON pgqueue_jobs (queue, priority DESC, run_at, id)
    WHERE state = 'available';

-- Delayed jobs and retries, found by the promoter when they become due.
CREATE INDEX pgqueue_jobs_scheduled_idx
    ON pgqueue_jobs (run_at)
    WHERE state = 'scheduled';

-- Leased jobs, found by the rescuer when their lease expires.
CREATE INDEX pgqueue_jobs_lease_idx
    ON pgqueue_jobs (lease_until)
    WHERE state = 'running';

-- Finished jobs, found by the cleaner when their retention expires.
CREATE INDEX pgqueue_jobs_finished_idx
    ON pgqueue_jobs (state, finished_at)
    WHERE state IN ('completed', 'failed');
