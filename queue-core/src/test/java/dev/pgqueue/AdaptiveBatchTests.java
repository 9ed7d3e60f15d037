package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A transactional queue drains a backlog of short jobs in batches that grow from its
 * {@code batch-size} towards its {@code max-batch-size}, and a leased one in claims that take what its
 * workers start during two claim round trips, up to the same maximum; a queue whose two sizes are
 * equal keeps its size.
 */
class AdaptiveBatchTests {

	private static final int JOBS = 6_000;

	@Test
	void aBacklogOfShortJobsIsDrainedInGrowingBatches() {
		assertThat(largestClaim(QueueSettings.defaults("grows").withConcurrency(2))).as("largest claim")
			.isGreaterThanOrEqualTo(160);
	}

	@Test
	void equalSizesKeepTheBatchFixed() {
		assertThat(largestClaim(QueueSettings.defaults("fixed").withConcurrency(2).withMaxBatchSize(10)))
			.as("largest claim")
			.isEqualTo(10);
	}

	@Test
	void aLeasedQueueClaimsAheadOfItsWorkersBeyondItsBatchSizeWhileJobsAreShort() {
		assertThat(largestClaim(QueueSettings.defaults("leased_grows").withMode(QueueMode.LEASED).withConcurrency(2)))
			.as("largest claim")
			.isGreaterThan(10);
	}

	@Test
	void aLeasedQueueWithEqualSizesOrWithoutClaimAheadKeepsItsBatchSize() {
		assertThat(largestClaim(
				QueueSettings.defaults("leased_fixed").withMode(QueueMode.LEASED).withConcurrency(2).withMaxBatchSize(10)))
			.as("largest claim")
			.isLessThanOrEqualTo(10);
		assertThat(largestClaim(
				QueueSettings.defaults("leased_no_ahead").withMode(QueueMode.LEASED).withConcurrency(2).withClaimAhead(false)))
			.as("largest claim")
			.isLessThanOrEqualTo(2);
	}

	@Test
	void twoPhaseOneJobPerTransactionAndLeasedQueuesWithoutClaimAheadDoNotAdapt() {
		assertThat(QueueSettings.defaults("leased").withMode(QueueMode.LEASED).adaptsBatchSize()).isTrue();
		assertThat(QueueSettings.defaults("leased").withMode(QueueMode.LEASED).withClaimAhead(false).adaptsBatchSize())
			.isFalse();
		assertThat(QueueSettings.defaults("two-phase").withBatchSize(1).withTwoPhaseCommit(true).adaptsBatchSize())
			.isFalse();
		assertThat(QueueSettings.defaults("one-per-transaction").withBatchSize(1).adaptsBatchSize()).isFalse();
		assertThat(QueueSettings.defaults("transactional").adaptsBatchSize()).isTrue();
	}

	private static double largestClaim(QueueSettings settings) {
		String queue = settings.name();
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		try (QueueFixture fixture = QueueFixture.create("adaptive_" + queue)) {
			fixture.metrics(new MicrometerQueueMetrics(registry, List.of(queue)));
			fixture.configure(settings);
			fixture.handle("noop", queue, (job) -> {
			});
			fixture.client()
				.enqueueAll(IntStream.range(0, JOBS).mapToObj((i) -> JobRequest.of("noop", i).queue(queue)).toList());
			JobPoller poller = fixture.poller(queue);
			poller.start();
			try {
				await().atMost(Duration.ofSeconds(60))
					.until(() -> fixture.countByState().getOrDefault("completed", 0L) == JOBS);
			}
			finally {
				poller.stop();
			}
			DistributionSummary claims = registry.find("pgqueue.claim.batch.size").tag("queue", queue).summary();
			assertThat(claims).isNotNull();
			return claims.max();
		}
	}

}
