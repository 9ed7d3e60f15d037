-- The trace context of the enqueue (W3C traceparent and tracestate, or whatever headers the
-- application's propagator writes), as a JSON object, so that the job's processing continues the
-- trace that enqueued it, on any instance. A column without a default is added at once, without
-- rewriting the table; jobs enqueued without tracing have none.
ALTER TABLE pgqueue_jobs ADD COLUMN trace_context jsonb;
