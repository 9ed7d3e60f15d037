-- What each queue did minute by minute, for the dashboard's charts and JobAdmin.history: attempts that
-- ended (completed, failed for good, failed and retried), how long jobs waited from their run-at to
-- their claim, and how long attempts ran. Every instance keeps its own counts in memory and adds them
-- to these rows every few seconds with one upsert, so a row holds the sum over all instances; the
-- cleaner deletes rows past pgqueue.history.retention. Durations are in milliseconds; the means are
-- the sums divided by waits and runs, the counts of the measurements they add up.
CREATE TABLE pgqueue_queue_history (
    queue       text             NOT NULL,
    minute      timestamptz      NOT NULL,
    completed   bigint           NOT NULL DEFAULT 0,
    failed      bigint           NOT NULL DEFAULT 0,
    retried     bigint           NOT NULL DEFAULT 0,
    waits       bigint           NOT NULL DEFAULT 0,
    wait_ms_sum double precision NOT NULL DEFAULT 0,
    wait_ms_max double precision NOT NULL DEFAULT 0,
    runs        bigint           NOT NULL DEFAULT 0,
    run_ms_sum  double precision NOT NULL DEFAULT 0,
    run_ms_max  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, minute)
);
