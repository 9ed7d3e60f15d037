package dev.pgqueue.engine.poll;

import dev.pgqueue.engine.limits.JobClaims;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What the poller of one queue and its claim strategy work with, made once per poller by the
 * engine's assembly: the queue's settings and the kinds it claims, who claims, where the SQL is,
 * which part of the queue claims read and with which statements, where claims are recorded, what
 * runs an attempt, where to report, and the settings every poller shares.
 *
 * @param settings the queue's settings
 * @param kinds kinds this poller claims (those with a listener in this application)
 * @param owner identifies this poller in lease columns and logs
 * @param jobs the statements of the jobs table
 * @param scope which part of the queue claims read
 * @param claims the claim statements: plain, or respecting concurrency limits
 * @param progress records what each claim achieved
 * @param runner runs one attempt
 * @param metrics where to report
 * @param workers threads, shutdown timeout, and whether completed jobs are deleted
 * @param connections the application's pool, whose idle connections are replaced after a lost one
 * @param rate the queue's rate limit as claims meet it ({@link RateGate#NONE} without one)
 */
public record RunContext(QueueSettings settings, String[] kinds, String owner, JobRepository jobs, ClaimScope scope,
		JobClaims claims, ClaimProgress progress, JobRunner runner, QueueMetrics metrics, WorkerSettings workers,
		PooledConnections connections, RateGate rate) {

	public RunContext {
		if (kinds.length == 0) {
			throw new IllegalArgumentException("Queue '" + settings.name() + "' has no job kinds to claim");
		}
		kinds = kinds.clone();
	}

	/** The queue's name. */
	public String queue() {
		return this.settings.name();
	}

	@Override
	public String[] kinds() {
		return this.kinds.clone();
	}

}
