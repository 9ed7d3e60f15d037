package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.engine.job.NewJob;
import org.jspecify.annotations.Nullable;

/**
 * New jobs as the arrays a many-row insert unnests, column by column, in the order of
 * {@code JobStatements.insertMany}: public id, kind, queue, payload, priority, run-at, delay (µs), max
 * attempts, jitter (µs), bucket, concurrency key, trace context, tags, rate weight.
 */
final class NewJobColumns {

	/** The longest delay written. */
	private static final Duration MAX_DELAY = Duration.ofDays(365L * 1000);

	/** How many parameters {@link #bind} sets. */
	static final int COUNT = 14;

	/** How many parameters {@link #bind} sets for jobs that are all {@link #plain()}. */
	static final int PLAIN_COUNT = 8;

	private final UUID[] ids;

	private final String[] kinds;

	private final String[] queues;

	private final String[] payloads;

	private final Integer[] priorities;

	private final Timestamp[] runAts;

	private final Long[] delays;

	private final Integer[] maxAttempts;

	private final Long[] jitters;

	private final Integer[] buckets;

	private final String[] concurrencyKeys;

	private final String[] traceContexts;

	/** Each job's tags as the text of a {@code text[]}: unnest cannot hand out arrays of arrays. */
	private final String[] tags;

	private final Integer[] rateWeights;

	/** Whether every job uses none of the optional columns, and is due now. */
	private final boolean plain;

	NewJobColumns(List<NewJob> jobs) {
		int n = jobs.size();
		this.ids = new UUID[n];
		this.kinds = new String[n];
		this.queues = new String[n];
		this.payloads = new String[n];
		this.priorities = new Integer[n];
		this.runAts = new Timestamp[n];
		this.delays = new Long[n];
		this.maxAttempts = new Integer[n];
		this.jitters = new Long[n];
		this.buckets = new Integer[n];
		this.concurrencyKeys = new String[n];
		this.traceContexts = new String[n];
		this.tags = new String[n];
		this.rateWeights = new Integer[n];
		Map<String, String> lastContext = null;
		String lastContextJson = null;
		boolean allPlain = true;
		for (int i = 0; i < n; i++) {
			NewJob job = jobs.get(i);
			allPlain = allPlain && isPlain(job);
			this.ids[i] = job.publicId();
			this.kinds[i] = job.kind();
			this.queues[i] = job.queue();
			this.payloads[i] = job.payloadJson();
			this.priorities[i] = job.priority();
			this.runAts[i] = timestamp(job.runAt());
			this.delays[i] = delayMicros(job.delay());
			this.maxAttempts[i] = job.maxAttempts();
			this.jitters[i] = delayMicros(job.jitter());
			this.buckets[i] = job.bucket();
			this.concurrencyKeys[i] = job.concurrencyKey();
			if (job.traceContext() != lastContext) {
				// The jobs of one enqueue share their headers: written once.
				lastContext = job.traceContext();
				lastContextJson = TraceContextColumn.write(lastContext);
			}
			this.traceContexts[i] = lastContextJson;
			this.tags[i] = job.tagsLiteral();
			this.rateWeights[i] = job.rateWeight();
		}
		this.plain = allPlain;
	}

	/**
	 * Whether the job leaves every optional column to its default: due now (no run-at, no delay, no
	 * jitter), no concurrency key, no tags, its kind's rate weight.
	 */
	static boolean isPlain(NewJob job) {
		return job.runAt() == null && (job.delay() == null || job.delay().isZero()) && job.jitter().isZero()
				&& job.concurrencyKey() == null && job.tags().isEmpty() && job.rateWeight() == null;
	}

	/**
	 * Whether every job is {@linkplain #isPlain plain}, so that {@link #bindPlain} and the plain insert
	 * may carry them.
	 */
	boolean plain() {
		return this.plain;
	}

	/**
	 * Sets the {@value #PLAIN_COUNT} arrays of {@code JobStatements.insertManyPlain} as parameters 1 to
	 * {@value #PLAIN_COUNT}: public id, kind, queue, payload, priority, max attempts, bucket, trace
	 * context. Only for {@link #plain()} jobs: the others' optional columns would be lost.
	 */
	void bindPlain(Connection con, PreparedStatement ps) throws SQLException {
		if (!this.plain) {
			throw new IllegalStateException("Not every job is plain: insert them with every column");
		}
		ps.setArray(1, con.createArrayOf("uuid", this.ids));
		ps.setArray(2, con.createArrayOf("text", this.kinds));
		ps.setArray(3, con.createArrayOf("text", this.queues));
		ps.setArray(4, con.createArrayOf("text", this.payloads));
		ps.setArray(5, con.createArrayOf("int4", this.priorities));
		ps.setArray(6, con.createArrayOf("int4", this.maxAttempts));
		ps.setArray(7, con.createArrayOf("int4", this.buckets));
		ps.setArray(8, con.createArrayOf("text", this.traceContexts));
	}

	/** Sets the {@value #COUNT} arrays as parameters 1 to {@value #COUNT}. */
	void bind(Connection con, PreparedStatement ps) throws SQLException {
		ps.setArray(1, con.createArrayOf("uuid", this.ids));
		ps.setArray(2, con.createArrayOf("text", this.kinds));
		ps.setArray(3, con.createArrayOf("text", this.queues));
		ps.setArray(4, con.createArrayOf("text", this.payloads));
		ps.setArray(5, con.createArrayOf("int4", this.priorities));
		ps.setArray(6, con.createArrayOf("timestamptz", this.runAts));
		ps.setArray(7, con.createArrayOf("int8", this.delays));
		ps.setArray(8, con.createArrayOf("int4", this.maxAttempts));
		ps.setArray(9, con.createArrayOf("int8", this.jitters));
		ps.setArray(10, con.createArrayOf("int4", this.buckets));
		ps.setArray(11, con.createArrayOf("text", this.concurrencyKeys));
		ps.setArray(12, con.createArrayOf("text", this.traceContexts));
		ps.setArray(13, con.createArrayOf("text", this.tags));
		ps.setArray(14, con.createArrayOf("int4", this.rateWeights));
	}

	static @Nullable Timestamp timestamp(@Nullable Instant instant) {
		return (instant != null) ? Timestamp.from(instant) : null;
	}

	static @Nullable Long delayMicros(@Nullable Duration delay) {
		if (delay == null) {
			return null;
		}
		// Saturate: a delay of centuries is still "far in the future" and must not overflow a timestamp.
		Duration capped = (delay.compareTo(MAX_DELAY) > 0) ? MAX_DELAY : delay;
		return capped.getSeconds() * 1_000_000 + capped.getNano() / 1_000;
	}

}
