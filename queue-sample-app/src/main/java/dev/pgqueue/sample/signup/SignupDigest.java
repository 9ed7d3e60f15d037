package dev.pgqueue.sample.signup;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * A recurring job: every minute (the schedule {@code signup-digest} in {@code application.yml}), counts
 * the accounts created in the minute before the tick. The tick is the job's run-at, so each run counts
 * its own minute, however late it runs: one that runs after a restart counts the minute it was due
 * for, not the minute it happens to run in.
 */
@Component
class SignupDigest {

	static final String KIND = "signup.digest";

	private static final Logger logger = LoggerFactory.getLogger(SignupDigest.class);

	private final JdbcTemplate jdbcTemplate;

	SignupDigest(JdbcTemplate jdbcTemplate) {
		this.jdbcTemplate = jdbcTemplate;
	}

	@JobListener(kind = KIND, queue = "mail")
	void digest(Job job) {
		Instant end = job.runAt();
		Instant start = end.minus(Duration.ofMinutes(1));
		Integer created = this.jdbcTemplate.queryForObject(
				"SELECT count(*) FROM accounts WHERE created_at >= ? AND created_at < ?", Integer.class,
				Timestamp.from(start), Timestamp.from(end));
		logger.info("Signups in the minute before {}: {}", end, created);
	}

}
