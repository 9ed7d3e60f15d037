package dev.pgqueue.sample.signup;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * "Sends" welcome emails: logs them and records each one in {@code sent_emails}.
 *
 * <p>The {@code mail} queue is transactional: this method runs inside the transaction that claimed
 * the job, so the {@code sent_emails} row and the job's completion commit together. If the method
 * throws, both roll back and the job is retried later.
 */
@Component
class WelcomeEmailSender {

	private static final Logger logger = LoggerFactory.getLogger(WelcomeEmailSender.class);

	private final JdbcTemplate jdbcTemplate;

	WelcomeEmailSender(JdbcTemplate jdbcTemplate) {
		this.jdbcTemplate = jdbcTemplate;
	}

	@JobListener(kind = WelcomeEmail.KIND, queue = "mail")
	void send(WelcomeEmail email, Job job) {
		// A real application would call its mail service here.
		logger.info("Sending welcome email to account {} ({})", email.accountId(), job);
		this.jdbcTemplate.update("INSERT INTO sent_emails (job_id, account_id, kind) VALUES (?, ?, ?)", job.id(),
				email.accountId(), job.kind());
	}

}
