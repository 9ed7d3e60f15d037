package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.RateRepository;
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
 * Rate limits that depend on the job: per concurrency key, per kind, and weights. Three pollers, each
 * as if in an instance of its own, drain a backlog; the recorded start instants are checked in SQL:
 * no key, kind or queue starts more than its limit (in units) in any window of one period, keys at
 * their limit do not hold the others up, and bad settings fail naming the key and the fix.
 */
class KeyedRateLimitTests {

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
	void eachKeyStartsNoMoreThanItsLimitInAnyWindowWhileTheKeysRunSideBySide(QueueMode mode) {
		String queue = "tenants";
		this.fixture = QueueFixture.create("rate_key_" + mode.name().toLowerCase(Locale.ROOT));
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		this.fixture.metrics(new MicrometerQueueMetrics(registry, List.of(queue)));
		this.fixture.configure(QueueSettings.defaults(queue)
			.withMode(mode)
			.withConcurrency(4)
			.withBatchSize(10)
			.withPerKeyRateLimit(new RateLimit(3, Duration.ofSeconds(1))));
		this.fixture.handle("tenants.call", queue, (job) -> {
		});
		int keys = 20;
		int perKey = 9;
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < perKey; i++) {
			for (int k = 0; k < keys; k++) {
				requests.add(JobRequest.of("tenants.call", i).concurrencyKey("tenant-" + k));
			}
		}
		this.fixture.client().enqueueAll(requests);
		this.pollers.addAll(this.fixture.startPollers(queue, 3));
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.queryForObject("SELECT count(*) FROM " + allJobs + " WHERE state = 'completed'",
					Integer.class) == keys * perKey);

		Integer most = jdbc.queryForObject("""
				SELECT max((SELECT count(*) FROM %1$s b
				            WHERE b.concurrency_key = a.concurrency_key
				              AND b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
				FROM %1$s a""".formatted(allJobs), Integer.class);
		Double span = jdbc.queryForObject("SELECT extract(epoch FROM max(started_at) - min(started_at)) FROM " + allJobs,
				Double.class);
		System.out.printf(Locale.ROOT, "per-key rate limit 3 per second, %s, 3 pollers, %d keys of %d jobs: most of one "
				+ "key in one window %d, all started over %.2f s%n", mode, keys, perKey, most, span);
		assertThat(most).as("most jobs of one key started in any one-second window").isLessThanOrEqualTo(3);
		// Each key: 3 at once, then 3 more a second later, then the last 3: two seconds and a bit. Keys one
		// after the other would take twenty times that.
		assertThat(span).as("seconds from the first start to the last").isGreaterThanOrEqualTo(1.9).isLessThan(8.0);
		assertThat(registry.get("pgqueue.rate.refused").tag("queue", queue).tag("limit", "per-key").counter().count())
			.as("jobs the per-key limit held back").isPositive();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void kindLimitsAndWeightsAreHonouredTogetherWithTheQueueLimit(QueueMode mode) {
		String queue = "api";
		this.fixture = QueueFixture.create("rate_kind_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue)
			.withMode(mode)
			.withConcurrency(4)
			.withBatchSize(10)
			.withRateLimit(new RateLimit(40, Duration.ofSeconds(1))));
		this.fixture.handle("api.heavy", queue, (job) -> {
		});
		this.fixture.handle("api.light", queue, (job) -> {
		});
		this.fixture.handlers().override(new KindSettings("api.heavy", null, null, null, 4));
		this.fixture.handlers().override(new KindSettings("api.light", null, null, new RateLimit(10, Duration.ofSeconds(1)),
				null));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			requests.add(JobRequest.of("api.heavy", i));
			requests.add(JobRequest.of("api.light", i));
		}
		this.fixture.client().enqueueAll(requests);
		this.pollers.addAll(this.fixture.startPollers(queue, 3));
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.queryForObject("SELECT count(*) FROM " + allJobs + " WHERE state = 'completed'",
					Integer.class) == 60);

		Map<String, Object> most = jdbc.queryForMap("""
				SELECT max((SELECT sum(CASE WHEN b.kind = 'api.heavy' THEN 4 ELSE 1 END) FROM %1$s b
				            WHERE b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
				         AS units,
				       max((SELECT count(*) FROM %1$s b
				            WHERE b.kind = 'api.light'
				              AND b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
				         AS light
				FROM %1$s a""".formatted(allJobs));
		Double span = jdbc.queryForObject("SELECT extract(epoch FROM max(started_at) - min(started_at)) FROM " + allJobs,
				Double.class);
		System.out.printf(Locale.ROOT, "queue limit 40 units per second, heavy jobs weigh 4, light ones limited to 10 "
				+ "per second, %s: most units in one window %s, most light jobs %s, all started over %.2f s%n", mode,
				most.get("units"), most.get("light"), span);
		assertThat(((Number) most.get("units")).intValue()).as("most units of the queue's limit used in one window")
			.isLessThanOrEqualTo(40);
		assertThat(((Number) most.get("light")).intValue()).as("most light jobs started in one window")
			.isLessThanOrEqualTo(10);
		// 150 units at 40 a second, and 30 light jobs at 10 a second: at least three seconds either way.
		assertThat(span).as("seconds from the first start to the last").isGreaterThanOrEqualTo(2.5).isLessThan(12.0);
	}

	@Test
	void aWeightAboveALimitOrAKindPeriodUnderThePollIntervalFailsNamingTheKeyAndTheFix() {
		String queue = "strict";
		this.fixture = QueueFixture.create("rate_bad");
		this.fixture.configure(QueueSettings.defaults(queue).withRateLimit(new RateLimit(3, Duration.ofSeconds(1))));
		this.fixture.handle("strict.big", queue, (job) -> {
		});
		this.fixture.handlers().override(new KindSettings("strict.big", null, null, null, 5));
		assertThatThrownBy(() -> this.fixture.poller(queue)).isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.kinds.strict.big.rate-weight is 5, above pgqueue.queues.strict.rate-limit.starts (3)")
			.satisfies((ex) -> assertThat(((InvalidQueueConfigurationException) ex).action())
				.contains("Lower the weight to 3 or less"));

		this.fixture.handlers().override(new KindSettings("strict.big", null, null,
				new RateLimit(10, Duration.ofMillis(200)), 1));
		assertThatThrownBy(() -> this.fixture.poller(queue)).isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.kinds.strict.big.rate-limit.period (PT0.2S) is shorter than the "
					+ "poll-interval of queue 'strict'");
	}

	@Test
	void queuesWhoseNameAndKeyReadAlikeJoinedByAColonKeepWindowsOfTheirOwn() {
		this.fixture = QueueFixture.create("rate_key_names");
		// Queue "a:b" with key "c" and queue "a" with key "b:c": one start a minute each.
		RateLimit oncePerMinute = new RateLimit(1, Duration.ofMinutes(1));
		this.fixture.configure(QueueSettings.defaults("a:b").withPollInterval(Duration.ofMillis(50))
			.withPerKeyRateLimit(oncePerMinute));
		this.fixture.configure(QueueSettings.defaults("a").withPollInterval(Duration.ofMillis(50))
			.withPerKeyRateLimit(oncePerMinute));
		this.fixture.handle("call.one", "a:b", (job) -> {
		});
		this.fixture.handle("call.two", "a", (job) -> {
		});
		UUID first = this.fixture.client().enqueue(JobRequest.of("call.one", 1).queue("a:b").concurrencyKey("c"));
		this.pollers.addAll(this.fixture.startPollers("a:b", 1));
		await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(this.fixture.row(first).get("state")));
		UUID second = this.fixture.client().enqueue(JobRequest.of("call.two", 2).queue("a").concurrencyKey("b:c"));
		this.pollers.addAll(this.fixture.startPollers("a", 1));
		await("the second queue's key, whose window a name without the queue's length would share")
			.atMost(Duration.ofSeconds(10))
			.until(() -> "completed".equals(this.fixture.row(second).get("state")));
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		assertThat(jdbc.queryForList("SELECT name FROM " + this.fixture.schema().name()
				+ ".pgqueue_rate_windows WHERE name LIKE 'key:%' ORDER BY name", String.class))
			.containsExactly("key:1:a:b:c", "key:3:a:b:c");
	}

	@Test
	void theWindowsOfIdleKeysAreDeletedAndTheOthersKept() {
		this.fixture = QueueFixture.create("rate_prune");
		RateRepository windows = new RateRepository(new JdbcTemplate(this.fixture.schema().dataSource()),
				SchemaName.of(this.fixture.schema().name()));
		windows.reserve("key:q:idle", 5, 100_000, 1);
		windows.reserve("queue:q", 5, 100_000, 1);
		windows.reserve("key:q:busy", 5, 60_000_000, 1);
		// The idle key's window (a period of 100 ms) is deleted once a whole period passed without a grant.
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
			.until(() -> EngineInternals.of(this.fixture.engine()).cleaner().pruneIdleRateKeys() == 1);
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		assertThat(jdbc.queryForList("SELECT name FROM " + this.fixture.schema().name()
				+ ".pgqueue_rate_windows ORDER BY name", String.class)).containsExactly("key:q:busy", "queue:q");
	}

}
