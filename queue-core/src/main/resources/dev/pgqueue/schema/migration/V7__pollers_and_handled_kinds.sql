-- Which queues live instances poll, so that every instance (producers included) can tell a job that
-- nobody will run. Each instance that polls heartbeats one row per queue; a queue whose rows all
-- missed three heartbeats is polled by nobody. Rows of instances gone for an hour are pruned.
CREATE TABLE pgqueue_pollers (
    queue        text        NOT NULL,
    instance     text        NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, instance)
);

-- The kinds some instance has handled in each queue, remembered after their instances stop (pruned
-- once unseen for 30 days): a worker that restarts leaves its queue unpolled for a moment, and that
-- must not make the enqueues of its kinds look like jobs nobody handles.
CREATE TABLE pgqueue_handled_kinds (
    queue        text        NOT NULL,
    kind         text        NOT NULL,
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, kind)
);
