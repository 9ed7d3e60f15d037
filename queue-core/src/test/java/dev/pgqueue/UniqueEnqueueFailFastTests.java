package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An enqueue of several unique keys outside a transaction first tries the insert that fails on a
 * held key, which is cheaper than one that skips held keys; what it runs is read from the statements
 * the engine prepares, what it leaves from the table.
 */
class UniqueEnqueueFailFastTests {

	private static QueueFixture fixture;

	private StatementRecorder recorder;

	private JobClient client;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("failfast");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	/** A client of an engine of its own, so that each test starts with the plain insert tried. */
	@BeforeEach
	void newEngine() {
		this.recorder = new StatementRecorder(fixture.dataSource());
		QueueEngine engine = fixture.engineBuilder(this.recorder).build();
		this.client = engine.client();
	}

	@Test
	void severalFreshKeysOutsideATransactionAreOnePlainInsert() {
		List<UUID> ids = this.client.enqueueAll(List.of(later("fresh", "a"), later("fresh", "b"), later("fresh", "c")));

		assertThat(ids).doesNotHaveDuplicates();
		assertThat(jobs("fresh")).isEqualTo(3);
		assertThat(inserts()).hasSize(1);
		assertThat(inserts().get(0)).doesNotContain("ON CONFLICT");
	}

	@Test
	void aHeldKeyUndoesThePlainInsertThenEveryKeyIsResolvedAndTheNextEnqueueSkipsIt() {
		UUID holder = this.client.enqueue(later("held", "k1"));
		this.recorder.clear();

		List<UUID> ids = this.client.enqueueAll(List.of(later("held", "k2"), later("held", "k1"), later("held", "k3")));

		assertThat(ids.get(1)).isEqualTo(holder);
		assertThat(ids).doesNotHaveDuplicates();
		assertThat(jobs("held")).isEqualTo(3);
		assertThat(inserts()).hasSize(2);
		assertThat(inserts().get(0)).doesNotContain("ON CONFLICT");
		assertThat(inserts().get(1)).contains("ON CONFLICT");

		// After one failure the next enqueue goes straight to the insert that skips held keys...
		this.recorder.clear();
		this.client.enqueueAll(List.of(later("held", "k4"), later("held", "k5")));
		assertThat(inserts()).singleElement().asString().contains("ON CONFLICT");

		// ...and the one after that tries the plain insert again.
		this.recorder.clear();
		this.client.enqueueAll(List.of(later("held", "k6"), later("held", "k7")));
		assertThat(inserts()).singleElement().asString().doesNotContain("ON CONFLICT");
		assertThat(jobs("held")).isEqualTo(7);
	}

	@Test
	void oneFreshKeyOutsideATransactionIsOnePlainInsertAndAHeldOneStillGetsItsHolder() {
		UUID first = this.client.enqueue(later("one", "k1"));

		assertThat(inserts()).singleElement().asString().doesNotContain("ON CONFLICT");
		this.recorder.clear();
		UUID again = this.client.enqueue(later("one", "k1"));

		assertThat(again).isEqualTo(first);
		assertThat(jobs("one")).isEqualTo(1);
		assertThat(inserts()).hasSize(2);
		assertThat(inserts().get(0)).doesNotContain("ON CONFLICT");
		assertThat(inserts().get(1)).contains("ON CONFLICT");
	}

	@Test
	void twoRequestsForOneKeyInOneCallGetOneJob() {
		List<UUID> ids = this.client.enqueueAll(List.of(later("twice", "same"), later("twice", "other"),
				later("twice", "same")));

		assertThat(ids.get(2)).isEqualTo(ids.get(0));
		assertThat(jobs("twice")).isEqualTo(2);
	}

	@Test
	void inTheCallersTransactionOnlyTheInsertThatSkipsHeldKeysRuns() {
		TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(this.recorder));
		UUID holder = this.client.enqueue(later("in-tx", "k1"));
		this.recorder.clear();

		List<UUID> ids = transaction.execute((status) -> {
			List<UUID> enqueued = this.client.enqueueAll(List.of(later("in-tx", "k1"), later("in-tx", "k2")));
			// The transaction is still usable: nothing failed in it.
			this.client.enqueue(later("in-tx", "k3"));
			return enqueued;
		});

		assertThat(ids.get(0)).isEqualTo(holder);
		assertThat(jobs("in-tx")).isEqualTo(3);
		assertThat(inserts()).isNotEmpty().allSatisfy((sql) -> assertThat(sql).contains("ON CONFLICT"));
	}

	private List<String> inserts() {
		return this.recorder.statements().stream().filter((sql) -> sql.contains("INSERT INTO")).toList();
	}

	private static JobRequest later(String kind, String key) {
		return JobRequest.of("failfast." + kind, null).uniqueKey(key).delay(Duration.ofHours(1));
	}

	private static long jobs(String kind) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE kind = ?", Long.class,
				"failfast." + kind);
	}

}
