package dev.pgqueue;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Fairness across keys: a tenant with 20 000 waiting jobs does not starve ten tenants of 20 that
 * arrive while it drains; weights share the workers in proportion; limits that read the queue in its
 * plain order cannot be combined with it. Two pollers, each as if in an instance of its own; the
 * order is read in SQL from the jobs' recorded starts.
 */
class FairnessTests {

	private static final int BIG = 20_000;

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
	void smallTenantsThatArriveBehindABigOneFinishBeforeItHasDoneTwoPercentMore(QueueMode mode) {
		String queue = "tenants";
		this.fixture = QueueFixture.create("fair_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue).withMode(mode).withFairness(KeyFairness.EQUAL));
		this.fixture.handle("tenants.work", queue, (job) -> Thread.sleep(1));
		List<JobRequest> big = new ArrayList<>();
		for (int i = 0; i < BIG; i++) {
			big.add(JobRequest.of("tenants.work", i).concurrencyKey("tenant-a"));
		}
		this.fixture.enqueueInOneTransaction(big);
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		this.pollers.addAll(this.fixture.startPollers(queue, 2));
		await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
				"SELECT count(*) FROM " + allJobs + " WHERE started_at IS NOT NULL", Integer.class) >= 200);

		List<JobRequest> small = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			for (char tenant = 'b'; tenant <= 'k'; tenant++) {
				small.add(JobRequest.of("tenants.work", i).concurrencyKey("tenant-" + tenant));
			}
		}
		this.fixture.enqueueInOneTransaction(small);
		// They arrived with their insert: its transaction's start, a little before its commit made them
		// visible (not the instant before the requests were built, which would count the big tenant's
		// claims while this thread was still serializing payloads).
		OffsetDateTime arrived = jdbc.queryForObject("SELECT min(created_at) FROM " + allJobs
				+ " WHERE concurrency_key <> 'tenant-a'", OffsetDateTime.class);
		await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject("SELECT count(*) FROM " + allJobs
				+ " WHERE concurrency_key <> 'tenant-a' AND state = 'completed'", Integer.class) == 200);

		// For each small tenant: how many of A's jobs started after the small ones arrived and before the
		// small tenant's last job started.
		List<Map<String, Object>> rows = jdbc.queryForList("""
				SELECT s.concurrency_key AS tenant,
				       (SELECT count(*) FROM %1$s a WHERE a.concurrency_key = 'tenant-a'
				          AND a.started_at >= ? AND a.started_at <= max(s.started_at)) AS big_before
				FROM %1$s s WHERE s.concurrency_key <> 'tenant-a'
				GROUP BY s.concurrency_key ORDER BY 2 DESC""".formatted(allJobs), arrived);
		long worst = ((Number) rows.get(0).get("big_before")).longValue();
		System.out.printf(Locale.ROOT, "fair-by-key, %s, 2 pollers: 10 tenants of 20 jobs arrived behind one of %d; "
				+ "jobs of the big tenant started before the last small one finished: at most %d (%s), %.1f %% of its "
				+ "jobs%n", mode, BIG, worst, rows.get(0).get("tenant"), 100.0 * worst / BIG);
		assertThat(worst).as("jobs of the big tenant that started before a small tenant's last, after they arrived")
			.isLessThanOrEqualTo(BIG / 50);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aKeyOfWeightThreeGetsThreeTimesTheShareOfAKeyOfWeightOne(QueueMode mode) {
		String queue = "weighted";
		this.fixture = QueueFixture.create("fair_weight_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue).withMode(mode).withConcurrency(2).withBatchSize(4)
			.withMaxBatchSize(4).withFairness(KeyFairness.of(queue, Map.of("gold", 3))));
		this.fixture.handle("weighted.work", queue, (job) -> Thread.sleep(2));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			requests.add(JobRequest.of("weighted.work", i).concurrencyKey("gold"));
			requests.add(JobRequest.of("weighted.work", i).concurrencyKey("plain"));
		}
		this.fixture.enqueueInOneTransaction(requests);
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		this.pollers.addAll(this.fixture.startPollers(queue, 1));
		await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
				"SELECT count(*) FROM " + allJobs + " WHERE state = 'completed'", Integer.class) >= 300);
		this.pollers.forEach(JobPoller::stop);

		// The first 240 starts, while both keys had jobs waiting.
		Map<String, Object> shares = jdbc.queryForMap("""
				SELECT count(*) FILTER (WHERE concurrency_key = 'gold') AS gold,
				       count(*) FILTER (WHERE concurrency_key = 'plain') AS plain
				FROM (SELECT concurrency_key FROM %s WHERE started_at IS NOT NULL ORDER BY started_at, id LIMIT 240) f
				""".formatted(allJobs));
		double ratio = ((Number) shares.get("gold")).doubleValue() / ((Number) shares.get("plain")).doubleValue();
		System.out.printf(Locale.ROOT, "fair-by-key, %s, weights gold 3 and plain 1: first 240 starts %s gold, %s plain "
				+ "(%.2f to 1)%n", mode, shares.get("gold"), shares.get("plain"), ratio);
		assertThat(ratio).as("gold's starts for each of plain's").isBetween(2.4, 3.6);
	}

	/**
	 * Two pollers, each with a ring of its own, over keys of uneven sizes: claims come back short when
	 * keys on a ring ran dry (the other poller took their jobs) while other keys still have jobs. The
	 * poller must claim again at once; with a poll interval of a minute, one that waited would stall the
	 * drain. (Transactional batches say so through the claim; leased pollers keep claiming while their
	 * workers free slots.)
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aClaimThatComesBackShortWhileKeysHaveJobsClaimsAgainAtOnce(QueueMode mode) {
		String queue = "rings";
		this.fixture = QueueFixture.create("fair_short_" + mode.name().toLowerCase(Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue).withMode(mode).withConcurrency(4).withBatchSize(10)
			.withMaxBatchSize(200).withPollInterval(Duration.ofMinutes(1)).withFairness(KeyFairness.EQUAL));
		this.fixture.handle("rings.work", queue, (job) -> {
		});
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 6_000; i++) {
			// Uneven keys: some run dry early in every round.
			requests.add(JobRequest.of("rings.work", i).concurrencyKey("key-" + (i * i % 100)));
		}
		this.fixture.enqueueInOneTransaction(requests);
		String table = this.fixture.table();
		String allJobs = this.fixture.allJobs();
		JdbcTemplate jdbc = new JdbcTemplate(this.fixture.schema().dataSource());
		long start = System.nanoTime();
		this.pollers.addAll(this.fixture.startPollers(queue, 2));
		await().atMost(Duration.ofSeconds(40)).until(() -> jdbc.queryForObject(
				"SELECT count(*) FROM " + allJobs + " WHERE state <> 'completed'", Integer.class) == 0);
		System.out.printf(Locale.ROOT, "fair-by-key, %s, 2 pollers with a poll interval of 1 min: 6 000 jobs over uneven "
				+ "keys drained in %.1f s%n", mode, (System.nanoTime() - start) / 1e9);
	}

	@Test
	void fairnessWithLimitsThatReadThePlainOrderFailsNamingTheKeyAndTheFix() {
		assertThatThrownBy(() -> QueueSettings.defaults("shared")
			.withLimits(ConcurrencyLimits.of("shared", 2, false, 0))
			.withFairness(KeyFairness.EQUAL)).isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.queues.shared.fair-by-key cannot be combined with "
					+ "pgqueue.queues.shared.per-key-concurrency");
		assertThatThrownBy(() -> KeyFairness.of("shared", Map.of("gold", 0)))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.queues.shared.key-weights[gold] must be between 1 and 1000, was 0");

		this.fixture = QueueFixture.create("fair_bad");
		this.fixture.configure(QueueSettings.defaults("shared").withFairness(KeyFairness.EQUAL));
		this.fixture.handle("shared.work", "shared", (job) -> {
		});
		this.fixture.handlers().override("shared.work", 3, null);
		assertThatThrownBy(() -> this.fixture.poller("shared")).isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.queues.shared.fair-by-key cannot be combined with the concurrency limits");
	}

}
