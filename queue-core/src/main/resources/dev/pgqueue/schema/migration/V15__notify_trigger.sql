-- An optional wake-up for jobs inserted by plain SQL rather than through JobClient: after each INSERT
-- statement into the jobs table, one NOTIFY per queue that received due jobs, on the same channel
-- JobClient uses ('pgqueue:<schema>', payload the queue's name). Statement-level with a transition
-- table, so a statement inserting a thousand rows into one queue notifies once, not a thousand times.
-- Created disabled: pgqueue.notifications.trigger enables or disables it at start-up. PostgreSQL folds
-- identical notifications of one transaction into one, so an insert through JobClient that notifies
-- itself is not announced twice.
CREATE FUNCTION pgqueue_notify_inserted_jobs() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pgqueue:' || TG_TABLE_SCHEMA, q.queue)
    FROM (SELECT DISTINCT queue FROM inserted_jobs WHERE state = 'available') q;
    RETURN NULL;
END
$$;

CREATE TRIGGER pgqueue_jobs_notify_inserted
    AFTER INSERT ON pgqueue_jobs
    REFERENCING NEW TABLE AS inserted_jobs
    FOR EACH STATEMENT
    EXECUTE FUNCTION pgqueue_notify_inserted_jobs();

ALTER TABLE pgqueue_jobs DISABLE TRIGGER pgqueue_jobs_notify_inserted;
