-- The kind index served operators' searches by kind. Those now read mostly finished jobs, which
-- pgqueue_finished_jobs indexes by kind; on the claimed table it was one more entry every new job
-- wrote and no claim read. A search by kind among unfinished jobs reads the claimed table, which
-- holds unfinished work only.
--
-- Dropped CONCURRENTLY, outside a transaction, so that upgrading a busy table blocks no claim.
DROP INDEX CONCURRENTLY IF EXISTS pgqueue_jobs_kind_idx;
