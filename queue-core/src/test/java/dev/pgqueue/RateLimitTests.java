package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.RateRepository.Grant;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.schema.SchemaName;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Rate limits: the window in the database, reserved from many threads at once, never grants more
 * than its limit in any window of one period and keeps close to the limit's pace; a queue with a limit
 * drained by three pollers, each as if in an instance of its own, starts no more than its limit in
 * any window (checked in SQL from the recorded start instants), in both modes, and keeps pace.
 */
class RateLimitTests {

	private QueueFixture fixture;

	private final List<JobPoller> pollers = new ArrayList<>();

	@AfterEach
	void tearDown() {
		this.pollers.forEach(JobPoller::stop);
		if (this.fixture != null) {
			this.fixture.close();
		}
	}

	@Test
	void theWindowNeverGrantsMoreThanItsLimitInAnyPeriodAndKeepsItsPace() throws Exception {
		this.fixture = QueueFixture.create("rate_window");
		RateRepository windows = new RateRepository(new JdbcTemplate(this.fixture.schema().dataSource()),
				SchemaName.of(this.fixture.schema().name()));
		int limit = 50;
		long periodMicros = 1_000_000;
		List<Grant> grants = Collections.synchronizedList(new ArrayList<>());
		long until = System.nanoTime() + Duration.ofMillis(3500).toNanos();
		CountDownLatch done = new CountDownLatch(4);
		AtomicInteger failures = new AtomicInteger();
		for (int t = 0; t < 4; t++) {
			int wanted = 1 + t;
			Thread thread = new Thread(() -> {
				try {
					while (System.nanoTime() < until) {
						Grant grant = windows.reserve("queue:greedy", limit, periodMicros, wanted);
						if (grant.granted() > 0) {
							grants.add(grant);
						}
						else {
							assertThat(grant.freeInMicros()).as("a refusal says when a start frees").isNotNull()
								.isBetween(0L, periodMicros + periodMicros / 50);
						}
					}
				}
				catch (Throwable ex) {
					failures.incrementAndGet();
					throw ex;
				}
				finally {
					done.countDown();
				}
			});
			thread.start();
		}
		done.await();
		assertThat(failures).hasValue(0);

		List<Grant> sorted = new ArrayList<>(grants);
		sorted.sort((a, b) -> a.grantedAt().compareTo(b.grantedAt()));
		int most = 0;
		for (int i = 0; i < sorted.size(); i++) {
			Instant end = sorted.get(i).grantedAt().plusNanos(periodMicros * 1000);
			int inWindow = 0;
			for (int j = i; j < sorted.size() && sorted.get(j).grantedAt().isBefore(end); j++) {
				inWindow += sorted.get(j).granted();
			}
			most = Math.max(most, inWindow);
		}
		int total = sorted.stream().mapToInt(Grant::granted).sum();
		double seconds = Duration.between(sorted.get(0).grantedAt(), sorted.get(sorted.size() - 1).grantedAt())
			.toNanos() / 1e9;
		System.out.printf(Locale.ROOT, "rate window, 4 threads, limit %d per second: %d granted in %.2f s, most in "
				+ "one window %d, %.1f a second after the first window%n", limit, total, seconds, most,
				(total - limit) / seconds);
		assertThat(most).as("most starts granted in any window of one period").isLessThanOrEqualTo(limit);
		// The first window's 50 come at once; after that 50 per 51 sub-windows, 49 a second.
		assertThat((total - limit) / seconds).as("starts per second after the first window's (%s in %.2f s)", total,
				seconds).isGreaterThanOrEqualTo(0.9 * limit * 50 / 51);
	}

	@Test
	void unusedStartsGoBackToTheWindow() {
		this.fixture = QueueFixture.create("rate_back");
		RateRepository windows = new RateRepository(new JdbcTemplate(this.fixture.schema().dataSource()),
				SchemaName.of(this.fixture.schema().name()));
		Grant first = windows.reserve("queue:back", 5, 60_000_000, 5);
		assertThat(first.granted()).isEqualTo(5);
		assertThat(first.freeInMicros()).isNull();
		Grant none = windows.reserve("queue:back", 5, 60_000_000, 1);
		assertThat(none.granted()).isZero();
		assertThat(none.freeInMicros()).as("the first start frees after a period and a sub-window at most")
			.isBetween(1L, 60_000_000L + 1_200_000L);
		windows.giveBack("queue:back", first, 2);
		assertThat(windows.reserve("queue:back", 5, 60_000_000, 5).granted()).isEqualTo(2);
		assertThat(windows.reserve("queue:other", 5, 60_000_000, 5).granted()).as("limits are apart").isEqualTo(5);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aQueueStartsNoMoreThanItsLimitInAnyWindowAcrossInstancesAndKeepsPace(QueueMode mode) {
		String queue = "metered";
		this.fixture = QueueFixture.create("rate_" + mode.name().toLowerCase(Locale.ROOT));
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		this.fixture.metrics(new MicrometerQueueMetrics(registry, List.of(queue)));
		this.fixture.configure(QueueSettings.defaults(queue)
			.withMode(mode)
			.withConcurrency(4)
			.withBatchSize(10)
			.withRateLimit(RateLimit.of(queue, 20, Duration.ofSeconds(1), QueueSettings.DEFAULT_POLL_INTERVAL)));
		this.fixture.handle("metered.call", queue, (job) -> {
		});
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			requests.add(JobRequest.of("metered.call", i));
		}
		this.fixture.client().enqueueAll(requests);
		this.pollers.addAll(this.fixture.startPollers(queue, 3));
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.queryForObject("SELECT count(*) FROM " + allJobs + " WHERE state = 'completed'",
					Integer.class) == 100);

		Integer most = jdbc.queryForObject("""
				SELECT max((SELECT count(*) FROM %1$s b
				            WHERE b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
				FROM %1$s a""".formatted(allJobs), Integer.class);
		assertThat(most).as("most jobs started in any one-second window, by their recorded starts")
			.isLessThanOrEqualTo(20);
		Double span = jdbc.queryForObject("SELECT extract(epoch FROM max(started_at) - min(started_at)) FROM " + allJobs,
				Double.class);
		System.out.printf(Locale.ROOT, "rate limit 20 per second, %s, 3 pollers: most in one window %d, 100 jobs "
				+ "started over %.2f s%n", mode, most, span);
		// 20 start at once, then 80 at 20 a second less a fifty-first: four windows and a bit.
		assertThat(span).as("seconds from the first start to the last").isGreaterThanOrEqualTo(4.0)
			.isLessThan(100 / (0.8 * 20));
		assertThat(registry.get("pgqueue.rate.refused").tag("queue", queue).counter().count())
			.as("starts the window refused").isPositive();
		assertThat(registry.get("pgqueue.rate.held").tag("queue", queue).timer().count()).as("stretches held")
			.isPositive();
	}

	@Test
	void badLimitsFailNamingTheKeyAndTheFix() {
		assertThatThrownBy(() -> RateLimit.of("payments", 0, Duration.ofSeconds(1), Duration.ofSeconds(1)))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.queues.payments.rate-limit.starts must be at least 1, was 0");
		assertThatThrownBy(() -> RateLimit.of("payments", 10, Duration.ofMillis(10), Duration.ofMillis(5)))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.queues.payments.rate-limit.period must be at least 50ms");
		assertThatThrownBy(() -> QueueSettings.defaults("payments")
			.withRateLimit(new RateLimit(10, Duration.ofMillis(500))))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("is shorter than the poll-interval of queue")
			.satisfies((ex) -> assertThat(((InvalidQueueConfigurationException) ex).action())
				.contains("pgqueue.queues.payments.poll-interval"));
	}

}
