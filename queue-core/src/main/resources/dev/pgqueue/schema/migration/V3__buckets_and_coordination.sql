-- Buckets: every job gets one at enqueue (random, or derived from a key its request gives), whatever
-- its queue's assignment, so that a queue can move from shared claims to bucket assignment without
-- touching its jobs. A constant default adds the column without rewriting the table.
ALTER TABLE pgqueue_jobs ADD COLUMN bucket smallint NOT NULL DEFAULT 0;

-- The bucket claim: exactly its predicate and order, one range per (queue, bucket).
CREATE INDEX pgqueue_jobs_bucket_claim_idx
    ON pgqueue_jobs (queue, bucket, priority DESC, run_at, id)
    WHERE state = 'available';

-- The coordinator of queues with bucket assignment. A group is the instances that poll one queue
-- for the same kinds (instances with other kinds divide the queue's buckets among themselves).

-- Members heartbeat; one that missed three heartbeats is dead.
CREATE TABLE pgqueue_members (
    queue        text        NOT NULL,
    kinds_hash   text        NOT NULL,
    member       text        NOT NULL,
    joined_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, kinds_hash, member)
);

-- One leader per group holds a lease; every new leadership increments the generation, which fences
-- the assignments a former leader wrote.
CREATE TABLE pgqueue_leaders (
    queue       text        NOT NULL,
    kinds_hash  text        NOT NULL,
    leader      text        NOT NULL,
    generation  bigint      NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (queue, kinds_hash)
);

-- Which member owns each bucket, in which generation; next_owner is set by the leader when a bucket
-- must move from a live owner, which hands it over itself once it has stopped claiming from it.
CREATE TABLE pgqueue_buckets (
    queue      text     NOT NULL,
    kinds_hash text     NOT NULL,
    bucket     smallint NOT NULL,
    owner      text     NOT NULL,
    next_owner text,
    generation bigint   NOT NULL,
    PRIMARY KEY (queue, kinds_hash, bucket)
);
