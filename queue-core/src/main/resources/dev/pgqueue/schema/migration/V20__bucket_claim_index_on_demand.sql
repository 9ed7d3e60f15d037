-- The bucket claim index held every due job of every queue, partial on state = 'available' like the
-- shared claim index, so each new job entered both although most installations have no queue with
-- bucket assignment: about a third of the index bytes a plain job wrote at enqueue. It is now made
-- only where a queue claims by buckets: the migrator creates it (concurrently) at start-up when the
-- application configures such a queue (BucketClaimIndex), and without it a bucket claim still works,
-- reading the shared claim index instead.
--
-- Dropped CONCURRENTLY, outside a transaction, so that upgrading a busy table blocks no claim.
DROP INDEX CONCURRENTLY IF EXISTS pgqueue_jobs_bucket_claim_idx;
