-- Finished jobs leave the table that claims read. Until now a completed, failed or cancelled job
-- stayed in pgqueue_jobs for its retention: every claim's table and its indexes carried the last
-- hour's completed jobs (hundreds of thousands at a few hundred jobs a second), each completion was
-- an update that entered every full index again, and all of it was vacuumed on the hot table.
--
-- From this version pgqueue_jobs holds unfinished jobs only (available, scheduled, running). A job
-- that finishes is moved, in the statement or transaction that finishes it, to
-- pgqueue_finished_jobs: the completion deletes the row and inserts it there in one statement; any
-- other update that sets a finished state (a failure on the last attempt, a rescue of an expired
-- lease on its last attempt, a cancellation), or an insert of a finished row by hand, is moved by
-- the trigger below, in the same transaction. A retry moves a failed job back, with the same id.
--
-- pgqueue_finished_jobs is partitioned by state: completed jobs by their finish time (the cleaner
-- creates time partitions ahead and drops whole partitions past the retention; rows that find no
-- partition go to the default one, which the cleaner prunes row by row), failed and cancelled
-- jobs in one table pruned row by row, as they are few and kept for days.
--
-- Both tables have the same columns in the same order: a later migration that adds a column to
-- one adds it to the other, and to the view pgqueue_all_jobs.
SET LOCAL lock_timeout = '10s';

CREATE TABLE pgqueue_finished_jobs (LIKE pgqueue_jobs INCLUDING DEFAULTS)
    PARTITION BY LIST (state);

CREATE TABLE pgqueue_finished_jobs_completed PARTITION OF pgqueue_finished_jobs
    FOR VALUES IN ('completed')
    PARTITION BY RANGE (finished_at);

CREATE TABLE pgqueue_finished_jobs_completed_default PARTITION OF pgqueue_finished_jobs_completed DEFAULT;

CREATE TABLE pgqueue_finished_jobs_failed PARTITION OF pgqueue_finished_jobs
    FOR VALUES IN ('failed', 'cancelled');

-- What the admin API's reads need, and the cleaner: a job by id (lists page by id) and by public id,
-- by kind, by finish time (retention, "finished since"), a queue's failed jobs, jobs with an error,
-- tagged jobs. A completed job enters four of them.
CREATE INDEX pgqueue_finished_jobs_id_idx ON pgqueue_finished_jobs (id);
CREATE INDEX pgqueue_finished_jobs_public_id_idx ON pgqueue_finished_jobs (public_id);
CREATE INDEX pgqueue_finished_jobs_kind_idx ON pgqueue_finished_jobs (kind, id);
CREATE INDEX pgqueue_finished_jobs_finished_idx ON pgqueue_finished_jobs (state, finished_at);
CREATE INDEX pgqueue_finished_jobs_failed_idx ON pgqueue_finished_jobs (state, queue, id)
    WHERE state IN ('failed', 'cancelled');
CREATE INDEX pgqueue_finished_jobs_errors_idx ON pgqueue_finished_jobs (id)
    WHERE last_error IS NOT NULL;
CREATE INDEX pgqueue_finished_jobs_tags_idx ON pgqueue_finished_jobs USING gin (tags)
    WHERE tags IS NOT NULL;

-- Moves a row that an update (or an insert) left in a finished state. Rows the completion finishes
-- never reach it: the completion moves them itself, cheaper than an update followed by this move.
-- The WHEN clause is evaluated for each written row without calling the function, so writes of
-- unfinished rows (every enqueue and claim) queue no trigger event.
CREATE FUNCTION pgqueue_move_finished_job() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I.pgqueue_jobs WHERE id = $1', TG_TABLE_SCHEMA) USING NEW.id;
    EXECUTE format('INSERT INTO %I.pgqueue_finished_jobs SELECT ($1).*', TG_TABLE_SCHEMA) USING NEW;
    RETURN NULL;
END
$$;

CREATE TRIGGER pgqueue_jobs_move_finished
    AFTER INSERT OR UPDATE OF state ON pgqueue_jobs
    FOR EACH ROW
    WHEN (NEW.state IN ('completed', 'failed', 'cancelled'))
    EXECUTE FUNCTION pgqueue_move_finished_job();

-- Every job, unfinished and finished, for operators' reads (the admin API reads it too).
CREATE VIEW pgqueue_all_jobs AS
    SELECT * FROM pgqueue_jobs
    UNION ALL
    SELECT * FROM pgqueue_finished_jobs;

-- The finished jobs kept so far move over once, in this transaction.
WITH moved AS (
    DELETE FROM pgqueue_jobs WHERE state IN ('completed', 'failed', 'cancelled') RETURNING *)
INSERT INTO pgqueue_finished_jobs SELECT * FROM moved;

-- Indexes of finished jobs on the claimed table hold nothing now.
DROP INDEX pgqueue_jobs_finished_idx;
DROP INDEX pgqueue_jobs_failed_idx;
