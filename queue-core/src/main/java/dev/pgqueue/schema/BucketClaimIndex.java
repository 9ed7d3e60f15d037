package dev.pgqueue.schema;

import java.util.Collection;
import java.util.List;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The index that bucket claims read: one range per queue and bucket, in claim order, over due jobs.
 *
 * <p>Every job gets a bucket at enqueue whatever its queue's assignment, so the index could hold every
 * due job; it used to, and so every plain job paid for it at enqueue although most installations have
 * no queue with bucket assignment. Migration V20 drops it; the {@link QueueMigrator} creates it again at
 * start-up, concurrently, on a schema whose application configures a queue with bucket assignment. It
 * is built over the jobs already there, so a queue can still move to bucket assignment without touching
 * its jobs. Until it is valid, bucket claims read the shared claim index and filter by bucket: the same
 * jobs, more entries read.
 *
 * <p>{@code CREATE INDEX CONCURRENTLY} blocks no claim or enqueue, but needs the table's owner and
 * waits for every transaction open on the database when it starts (and on a large table takes as
 * long as reading it). Two instances starting at once may both try: the second finds the name taken and
 * goes on. A build that fails or is cancelled leaves an invalid index, which no claim reads and which
 * this class reports rather than drops, since another instance's build in progress looks the same.
 */
public final class BucketClaimIndex {

	/** The index's name, on {@code pgqueue_jobs}. */
	public static final String NAME = "pgqueue_jobs_bucket_claim_idx";

	/**
	 * Whether the index exists and whether it is valid: no row when it does not exist. Parameter: the
	 * index's schema-qualified, quoted name.
	 */
	static final String STATE = """
			SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(?)""";

	/** The index (its name unqualified: an index lives in its table's schema), on the table's qualified name. */
	static final String CREATE = """
			CREATE INDEX CONCURRENTLY IF NOT EXISTS %s
			    ON %s (queue, bucket, priority DESC, run_at, id)
			    WHERE state = 'available'""";

	private static final Logger logger = LoggerFactory.getLogger(BucketClaimIndex.class);

	private final JdbcTemplate jdbc;

	private final SchemaName schema;

	public BucketClaimIndex(DataSource dataSource, SchemaName schema) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.schema = schema;
	}

	/** Whether the index exists and claims can read it. */
	public boolean valid() {
		return Boolean.TRUE.equals(state());
	}

	/**
	 * Creates the index unless it exists, for the queues named (those with bucket assignment, for the
	 * log and the errors). An invalid one is reported, not replaced.
	 * @throws InvalidQueueConfigurationException when it cannot be created (the role does not own the
	 * table, say), naming the queues and the statement their owner can run
	 */
	public void create(Collection<String> queues) {
		Boolean state = state();
		if (state != null) {
			if (!state) {
				logger.warn("pgqueue: index {} on {}, which bucket claims of queues {} read, is invalid: another "
						+ "instance is building it, or a build failed or was cancelled. Until it is valid, those claims "
						+ "read the shared claim index. If no build is running (pg_stat_progress_create_index), have "
						+ "the table's owner run DROP INDEX CONCURRENTLY {}; then restart an instance, or run: {}",
						NAME, table(), List.copyOf(queues), index(), statement());
			}
			return;
		}
		long started = System.nanoTime();
		try {
			// Autocommit: CREATE INDEX CONCURRENTLY refuses to run inside a transaction block.
			this.jdbc.execute(statement());
		}
		catch (DataAccessException ex) {
			if (state() != null) {
				// Another instance took the name first; its build serves these queues too.
				return;
			}
			throw new InvalidQueueConfigurationException(setting(queues), "Could not create index " + NAME + " on "
					+ table() + ", which the bucket claims of queues " + List.copyOf(queues) + " read: "
					+ ex.getMostSpecificCause().getMessage(), "Have the table's owner run: " + statement()
							+ "; or give pgqueue a data source whose role owns the table.");
		}
		logger.info("pgqueue: created index {} on {} for the bucket claims of queues {} in {} ms", NAME, table(),
				List.copyOf(queues), (System.nanoTime() - started) / 1_000_000);
	}

	/**
	 * Checks that the index exists, where pgqueue does not migrate the schema itself.
	 * @throws InvalidQueueConfigurationException when it does not, naming the queues and the
	 * statement to run
	 */
	public void require(Collection<String> queues) {
		Boolean state = state();
		if (state == null) {
			throw new InvalidQueueConfigurationException(setting(queues), "Queues " + List.copyOf(queues)
					+ " claim by buckets but index " + NAME + " does not exist on " + table()
					+ " and pgqueue.schema.migrate is false", "Have the table's owner run: " + statement()
							+ "; or set pgqueue.schema.migrate=true to let pgqueue create it.");
		}
		if (!state) {
			logger.warn("pgqueue: index {} on {}, which bucket claims of queues {} read, is invalid; until it is "
					+ "valid, those claims read the shared claim index. Have the table's owner run DROP INDEX "
					+ "CONCURRENTLY {} once no build is running, then: {}", NAME, table(), List.copyOf(queues), index(),
					statement());
		}
	}

	/** The statement that creates the index, as an operator would run it. */
	public String statement() {
		return CREATE.formatted(NAME, table()).replaceAll("\\s+", " ");
	}

	private @Nullable Boolean state() {
		return this.jdbc.query(STATE, (rs) -> rs.next() ? rs.getBoolean(1) : null, index());
	}

	private static String setting(Collection<String> queues) {
		return "pgqueue.queues." + queues.iterator().next() + ".assignment";
	}

	private String index() {
		return this.schema.qualify(NAME);
	}

	private String table() {
		return this.schema.qualify("pgqueue_jobs");
	}

}
