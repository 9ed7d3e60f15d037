-- What operators and listeners say about running jobs, kept apart from the jobs table: a transactional
-- batch holds its jobs' rows locked until it commits, so neither a cancel request nor a progress
-- report could be written to them while they run. One row per job that has either; the instance
-- running the job reads the cancel requests of its running jobs (at once when notified, else within a
-- second) and writes their progress at most every few seconds. Rows of jobs that ended are deleted by
-- the instance that ran them, and by the cleaner otherwise.
CREATE TABLE pgqueue_job_controls (
    job_id              bigint      PRIMARY KEY,
    cancel_requested_at timestamptz,
    cancel_requested_by text,
    progress_percent    smallint,
    progress_message    text,
    progress_at         timestamptz,
    CONSTRAINT pgqueue_job_controls_percent_check CHECK (progress_percent BETWEEN 0 AND 100)
);
