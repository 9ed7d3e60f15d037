package dev.pgqueue.sample.report;

import java.time.Duration;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import dev.pgqueue.NonRetryableJobException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Generates monthly reports: slow work, so it runs in the leased {@code reports} queue.
 *
 * <p>A leased job runs outside any transaction and holds no connection while it works; pgqueue
 * extends its lease as it runs. If the process dies mid-report the lease expires and the job runs
 * again, so the result is written with an upsert keyed by the job's id: running twice is harmless.
 */
@Component
class MonthlyReportGenerator {

	private static final Logger logger = LoggerFactory.getLogger(MonthlyReportGenerator.class);

	private final JdbcTemplate jdbcTemplate;

	private final Duration workDuration;

	MonthlyReportGenerator(JdbcTemplate jdbcTemplate, @Value("${sample.reports.work-duration:3s}") Duration workDuration) {
		this.jdbcTemplate = jdbcTemplate;
		this.workDuration = workDuration;
	}

	@JobListener(kind = MonthlyReportRequest.KIND, queue = "reports")
	void generate(MonthlyReportRequest request, Job job) throws InterruptedException {
		logger.info("Generating the {} report of account {} ({})", request.month(), request.accountId(), job);
		Integer emailsSent = this.jdbcTemplate.queryForObject("""
				SELECT CASE WHEN EXISTS (SELECT 1 FROM accounts WHERE id = ?)
				            THEN (SELECT count(*) FROM sent_emails
				                  WHERE account_id = ? AND sent_at >= ?::date AND sent_at < ?::date)
				       END""", Integer.class, request.accountId(), request.accountId(),
				request.month().atDay(1), request.month().plusMonths(1).atDay(1));
		if (emailsSent == null) {
			// Retrying cannot bring the account back: fail the job at once.
			throw new NonRetryableJobException("Account " + request.accountId() + " does not exist");
		}
		// The slow part. If the application stops meanwhile, the sleep is interrupted and the job
		// goes back to the queue without using an attempt.
		Thread.sleep(this.workDuration.toMillis());
		this.jdbcTemplate.update("""
				INSERT INTO reports (job_id, account_id, month, emails_sent, attempt)
				VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (job_id) DO UPDATE
				SET emails_sent = excluded.emails_sent, attempt = excluded.attempt, generated_at = now()""",
				job.id(), request.accountId(), request.month().atDay(1), emailsSent, job.attempt());
		logger.info("Generated the {} report of account {}: {} emails sent", request.month(), request.accountId(),
				emailsSent);
	}

}
