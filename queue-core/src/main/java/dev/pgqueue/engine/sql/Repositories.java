package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every repository of one engine, on one {@link JdbcTemplate} and one schema: the hot path
 * ({@link JobRepository}, {@link LimitRepository}), operators' statements ({@link AdminRepository}),
 * the background services' ({@link MaintenanceRepository}), the bucket coordinator's
 * ({@link CoordinationRepository}), two-phase commit's ({@link PreparedTransactionRepository}), the
 * polling heartbeat's ({@link PollingRepository}), unique jobs' ({@link UniqueJobRepository}) and
 * recurring jobs' ({@link ScheduleRepository}) and rate limits' windows ({@link RateRepository}).
 */
public record Repositories(JobRepository jobs, AdminRepository admin, MaintenanceRepository maintenance,
		CoordinationRepository coordination, LimitRepository limits, PreparedTransactionRepository prepared,
		PollingRepository polling, UniqueJobRepository unique, ScheduleRepository schedules, RateRepository rates) {

	/**
	 * @param notify whether statements that make jobs due (enqueue, promote, retry, resume) notify
	 * their queue's pollers
	 */
	public static Repositories on(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		return new Repositories(new JobRepository(jdbc, schema, notify), new AdminRepository(jdbc, schema, notify),
				new MaintenanceRepository(jdbc, schema, notify), new CoordinationRepository(jdbc, schema),
				new LimitRepository(jdbc, schema), new PreparedTransactionRepository(jdbc, schema),
				new PollingRepository(jdbc, schema), new UniqueJobRepository(jdbc, schema, notify),
				new ScheduleRepository(jdbc, schema), new RateRepository(jdbc, schema));
	}

	/** The same repositories with another job repository, for tests that make some of its statements fail. */
	public Repositories withJobs(JobRepository jobs) {
		return new Repositories(jobs, this.admin, this.maintenance, this.coordination, this.limits, this.prepared,
				this.polling, this.unique, this.schedules, this.rates);
	}

}
