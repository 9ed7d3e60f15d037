package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A job's own rate weight ({@link JobRequest#rateWeight}): three pollers, each as if in an instance of
 * its own, start no more units of a limit in any window than the limit allows, counting each job at
 * its own weight (checked in SQL from the recorded start instants), both under a queue's own limit
 * (whose claims reserve a number of starts) and under a kind's limit (whose claims choose their jobs);
 * a job heavier than the limit, written where the limit was not known, starts alone as the whole
 * limit; an enqueue that knows the limit refuses such a weight.
 */
class JobRateWeightTests {

	private QueueFixture fixture;

	private final List<JobPoller> pollers = new ArrayList<>();

	@AfterEach
	void tearDown() {
		this.pollers.forEach(JobPoller::stop);
		if (this.fixture != null) {
			this.fixture.close();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void eachJobUsesItsOwnWeightOfTheQueueLimit(QueueMode mode) {
		String queue = "sms";
		this.fixture = QueueFixture.create("weight_queue_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue)
			.withMode(mode)
			.withConcurrency(4)
			.withBatchSize(10)
			.withRateLimit(new RateLimit(40, Duration.ofSeconds(1))));
		this.fixture.handle("sms.send", queue, (job) -> {
		});
		drainAndCheck(queue, "sms.send", 40, mode, "queue limit");
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void eachJobUsesItsOwnWeightOfItsKindsLimit(QueueMode mode) {
		String queue = "mail";
		this.fixture = QueueFixture.create("weight_kind_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue).withMode(mode).withConcurrency(4).withBatchSize(10));
		this.fixture.handle("mail.send", queue, (job) -> {
		});
		this.fixture.handlers().override(new KindSettings("mail.send", null, null,
				new RateLimit(40, Duration.ofSeconds(1)), null));
		drainAndCheck(queue, "mail.send", 40, mode, "kind limit");
	}

	/**
	 * Enqueues 60 jobs, one in four of weight 7, and one more job that a producer without the limit wrote
	 * with a weight of 100; drains them with three pollers; checks every one-second window by the jobs'
	 * recorded starts.
	 */
	private void drainAndCheck(String queue, String kind, int limit, QueueMode mode, String what) {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			JobRequest request = JobRequest.of(kind, i);
			requests.add((i % 4 == 0) ? request.rateWeight(7) : request);
		}
		requests.add(JobRequest.of(kind, "whole"));
		this.fixture.client().enqueueAll(requests);
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		// As a producer that does not know the limit would have written it.
		jdbc.update("UPDATE " + table + " SET rate_weight = 100 WHERE payload = '\"whole\"'::jsonb");
		this.pollers.addAll(this.fixture.startPollers(queue, 3));
		await().atMost(Duration.ofSeconds(40))
			.until(() -> jdbc.queryForObject("SELECT count(*) FROM " + allJobs + " WHERE state = 'completed'",
					Integer.class) == 61);

		Integer most = jdbc.queryForObject("""
				SELECT max((SELECT sum(least(coalesce(b.rate_weight, 1), %2$d)) FROM %1$s b
				            WHERE b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
				FROM %1$s a""".formatted(allJobs, limit), Integer.class);
		Integer besideWhole = jdbc.queryForObject("""
				SELECT count(*) FROM %1$s a, %1$s w
				WHERE w.rate_weight = 100 AND a.id <> w.id
				  AND a.started_at > w.started_at - interval '1 second' AND a.started_at < w.started_at + interval '1 second'
				""".formatted(allJobs), Integer.class);
		Double span = jdbc.queryForObject("SELECT extract(epoch FROM max(started_at) - min(started_at)) FROM " + allJobs,
				Double.class);
		System.out.printf(Locale.ROOT, "%s of %d units a second, %s, 3 pollers, 60 jobs (15 of weight 7) and one of "
				+ "weight 100: most units in one window %d, jobs started within a second of the heavy one %d, all "
				+ "started over %.2f s%n", what, limit, mode, most, besideWhole, span);
		assertThat(most).as("most units started in any one-second window, each job at its own weight")
			.isLessThanOrEqualTo(limit);
		assertThat(besideWhole).as("jobs started within a second of the job as heavy as the whole limit").isZero();
		// 150 units and one whole period at 40 a second: the first 40 at once, then about three more seconds.
		assertThat(span).as("seconds from the first start to the last").isGreaterThanOrEqualTo(3.0).isLessThan(15.0);
	}

	@Test
	void anEnqueueThatKnowsTheLimitRefusesAHeavierWeight() {
		String queue = "strict";
		this.fixture = QueueFixture.create("weight_bad");
		this.fixture.configure(QueueSettings.defaults(queue).withRateLimit(new RateLimit(3, Duration.ofSeconds(1))));
		this.fixture.handle("strict.call", queue, (job) -> {
		});
		assertThatThrownBy(() -> this.fixture.client().enqueue(JobRequest.of("strict.call", 1).rateWeight(5)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("Rate weight of a 'strict.call' job (queue 'strict') is 5, above "
					+ "pgqueue.queues.strict.rate-limit.starts (3)")
			.hasMessageContaining("Split the job, or raise the limit");
		assertThatThrownBy(() -> JobRequest.of("strict.call", 1).rateWeight(0))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("Rate weight of a 'strict.call' job must be at least 1, was 0");
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		assertThat(jdbc.queryForObject("SELECT count(*) FROM " + this.fixture.allJobs(), Integer.class))
			.as("jobs written").isZero();
	}

}
