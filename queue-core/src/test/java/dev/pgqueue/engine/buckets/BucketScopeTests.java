package dev.pgqueue.engine.buckets;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.job.ClaimStart;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class BucketScopeTests {

	private final AtomicLong now = new AtomicLong(1_000);

	private final BucketScope scope = new BucketScope(null, this.now::get);

	@Test
	void eachClaimReadsOnlyTheAssignedBucketsStartingOneBucketFurtherOn() {
		this.scope.assign(new int[] { 7, 3, 5 }, 2_000);
		List<int[]> read = new ArrayList<>();

		for (int i = 0; i < 4; i++) {
			this.scope.claim((start) -> {
				read.add(start.buckets());
				return List.of();
			});
		}

		assertThat(read).containsExactly(new int[] { 3, 5, 7 }, new int[] { 5, 7, 3 }, new int[] { 7, 3, 5 },
				new int[] { 3, 5, 7 });
	}

	@Test
	void claimsReadNothingOnceTheMembershipCouldHaveExpiredUntilTheAssignmentIsConfirmed() {
		this.scope.assign(new int[] { 1, 2 }, 2_000);
		List<ClaimStart> starts = new ArrayList<>();

		this.now.set(2_001);
		assertThat(this.scope.claim((start) -> {
			starts.add(start);
			return List.of();
		})).isEmpty();
		assertThat(starts).as("no statement runs without a valid assignment").isEmpty();
		assertThat(this.scope.buckets()).isEmpty();

		this.scope.assign(new int[] { 1, 2 }, 5_000);
		this.scope.claim((start) -> {
			starts.add(start);
			return List.of();
		});
		assertThat(starts).hasSize(1);
	}

	@Test
	void aNewAssignmentWaitsUntilNoClaimThatReadTheOldOneIsStillRunning() throws Exception {
		this.scope.assign(new int[] { 1, 2 }, Long.MAX_VALUE);
		CountDownLatch claiming = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<Void> claim = CompletableFuture.runAsync(() -> this.scope.claim((start) -> {
			claiming.countDown();
			awaitLatch(release);
			return List.of();
		}), (task) -> new Thread(task, "claim").start());
		assertThat(claiming.await(10, TimeUnit.SECONDS)).isTrue();

		CompletableFuture<Boolean> reassigned = CompletableFuture.supplyAsync(
				() -> this.scope.assign(new int[] { 2 }, Long.MAX_VALUE), (task) -> new Thread(task, "assign").start());

		// The hand-over of bucket 1 must not start while a claim that read it still runs.
		assertThat(reassigned).isNotDone();
		await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2)).until(() -> !reassigned.isDone());
		release.countDown();
		claim.get(10, TimeUnit.SECONDS);
		assertThat(reassigned.get(10, TimeUnit.SECONDS)).as("no bucket was added").isFalse();
		assertThat(this.scope.buckets()).containsExactly(2);
	}

	private static void awaitLatch(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
