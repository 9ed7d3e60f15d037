package dev.pgqueue.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.NonRetryableJobException;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The application the kit's tests test: greetings written to a table in the transactional queue
 * {@code mail}, reports in the leased queue {@code reports}, and a job in queue {@code slow} that
 * runs until the test lets it finish. Its own table, {@code greetings}, lives in the test class's
 * schema ({@code @IsolatedQueueSchema(applicationTables = true)}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class KitTestApplication {

	static final String CREATE_GREETINGS = "CREATE TABLE IF NOT EXISTS greetings (name text NOT NULL)";

	/** A greeting: {@code fail} fails for good, {@code flaky} fails and is retried, {@code chain} enqueues another. */
	record Greeting(String name) {
	}

	record ReportRequest(long accountId) {
	}

	@Bean
	Listeners listeners(JdbcTemplate jdbc, JobClient jobs) {
		return new Listeners(jdbc, jobs);
	}

	/** The listeners, and what they saw. */
	static class Listeners {

		final Map<String, Thread> greetingThreads = new ConcurrentHashMap<>();

		final List<Thread> reportThreads = new CopyOnWriteArrayList<>();

		volatile CountDownLatch slowRelease = new CountDownLatch(1);

		private final JdbcTemplate jdbc;

		private final JobClient jobs;

		Listeners(JdbcTemplate jdbc, JobClient jobs) {
			this.jdbc = jdbc;
			this.jobs = jobs;
		}

		@JobListener(kind = "greeting.send", queue = "mail")
		void greet(Greeting greeting) {
			this.greetingThreads.put(greeting.name(), Thread.currentThread());
			this.jdbc.update("INSERT INTO greetings (name) VALUES (?)", greeting.name());
			switch (greeting.name()) {
				case "fail" -> throw new NonRetryableJobException("boom: greeting 'fail' cannot be sent");
				case "flaky" -> throw new IllegalStateException("flaky: the mail server did not answer");
				case "chain" -> this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("chained")));
				default -> {
				}
			}
		}

		@JobListener(kind = "report.render", queue = "reports")
		void render(ReportRequest request, Job job) {
			this.reportThreads.add(Thread.currentThread());
		}

		@JobListener(kind = "stuck.job", queue = "slow")
		void stuck(Map<String, Object> payload) throws InterruptedException {
			this.slowRelease.await(30, TimeUnit.SECONDS);
		}

		/** Lets a running {@code stuck.job} finish, and the next ones run through. */
		void releaseSlowJobs() {
			this.slowRelease.countDown();
		}

	}

}
