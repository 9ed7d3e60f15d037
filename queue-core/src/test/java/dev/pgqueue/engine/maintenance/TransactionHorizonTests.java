package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

import dev.pgqueue.engine.sql.MaintenanceRepository.HorizonReading;
import dev.pgqueue.metrics.OldestTransaction;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@link TransactionHorizon} dates a snapshot whose transaction start this role may not see, on
 * a clock the test turns. Reading a real holder is in {@code TransactionHorizonDatabaseTests}.
 */
class TransactionHorizonTests {

	private static final Instant T = Instant.parse("2026-11-23T12:00:00Z");

	private final AtomicReference<Instant> now = new AtomicReference<>(T);

	private final TransactionHorizon horizon = new TransactionHorizon(this.now::get);

	@Test
	void reportsTheAgeTheServerGivesWhenItGivesOne() {
		OldestTransaction oldest = this.horizon.read(new HorizonReading(1_000, true, 42, "report", "idle in transaction",
				300, Duration.ofMinutes(3)));

		assertThat(oldest.age()).isEqualTo(Duration.ofMinutes(3));
		assertThat(oldest.ageEstimated()).isFalse();
		assertThat(oldest.describe()).contains("pid 42", "'report'", "idle in transaction", "180 s", "300 transactions");
	}

	@Test
	void datesAHiddenSnapshotByTheFirstReadingWhoseNextTransactionIdHadPassedIt() {
		read(1_000, false, 0);
		advance(15);
		// The snapshot is taken after this reading: its xmin is 1 200.
		read(1_200, false, 0);
		advance(15);
		read(1_500, true, 300);
		advance(15);
		OldestTransaction oldest = read(1_800, true, 600);

		assertThat(oldest.ageEstimated()).isTrue();
		assertThat(oldest.age()).as("at least since the reading at 1 500, the first to have passed it")
			.isEqualTo(Duration.ofSeconds(15));
		assertThat(this.horizon.last()).isEqualTo(oldest);
	}

	@Test
	void aSnapshotOlderThanEveryReadingIsAtLeastAsOldAsTheFirst() {
		read(5_000, true, 4_000);
		advance(60);

		assertThat(read(5_100, true, 4_100).age()).isEqualTo(Duration.ofSeconds(60));
	}

	@Test
	void aSnapshotNoTransactionIdWasAssignedSinceHoldsNothingBack() {
		read(700, true, 0);
		advance(60);

		assertThat(read(700, true, 0).age()).isZero();
	}

	@Test
	void nothingHeldIsNone() {
		assertThat(read(10, false, 0)).isEqualTo(OldestTransaction.NONE);
	}

	private OldestTransaction read(long nextXid, boolean held, long since) {
		return this.horizon.read(new HorizonReading(nextXid, held, held ? 7 : null, held ? "psql" : null, null, since,
				null));
	}

	private void advance(long seconds) {
		this.now.set(this.now.get().plusSeconds(seconds));
	}

}
