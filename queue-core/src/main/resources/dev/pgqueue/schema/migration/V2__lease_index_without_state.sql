-- The lease index was partial on state = 'running', which made the planner choose it for every
-- guarded completion (WHERE id = … AND state = 'running') and scan all running jobs instead of
-- looking each id up by primary key. Keyed on lease_until IS NOT NULL it still serves the rescuer
-- (lease_until < now() implies it) but no longer matches the completions' predicate.
DROP INDEX pgqueue_jobs_lease_idx;

CREATE INDEX pgqueue_jobs_lease_idx
    ON pgqueue_jobs (lease_until)
    WHERE lease_until IS NOT NULL;
