package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

import dev.pgqueue.JobState;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.autoconfigure.ShardReading;
import org.jspecify.annotations.Nullable;

/**
 * Reads each shard for the overview's Shards section, at most once per {@code minReadingGap} however
 * many pages ask: counting reads every row of each shard's table. The queues' totals are added up from
 * the same reading ({@link #totals()}), so a refresh counts each shard's rows once.
 */
final class ShardSummaries {

	private final QueueEngine shards;

	private final long minReadingGapNanos;

	private final LongSupplier nanoTime;

	private @Nullable List<ShardReading> lastRead;

	private long lastReadAt;

	ShardSummaries(QueueEngine shards, Duration minReadingGap) {
		this(shards, minReadingGap, System::nanoTime);
	}

	ShardSummaries(QueueEngine shards, Duration minReadingGap, LongSupplier nanoTime) {
		this.shards = shards;
		this.minReadingGapNanos = minReadingGap.toNanos();
		this.nanoTime = nanoTime;
	}

	/** Each shard in declared order, as last read if that was less than {@code minReadingGap} ago. */
	synchronized List<ShardReading> read() {
		long now = this.nanoTime.getAsLong();
		List<ShardReading> last = this.lastRead;
		if (last != null && now - this.lastReadAt < this.minReadingGapNanos) {
			return last;
		}
		List<ShardReading> read = ShardReading.readAll(this.shards);
		this.lastRead = read;
		this.lastReadAt = now;
		return read;
	}

	/**
	 * The jobs by queue and state added up over the shards, from the last reading.
	 * @throws ShardsPartlyFailedException when a shard does not answer, with the others' counts
	 */
	Map<String, Map<JobState, Long>> totals() {
		Map<String, Object> counted = new LinkedHashMap<>();
		Map<String, RuntimeException> failures = new LinkedHashMap<>();
		Map<String, Map<JobState, Long>> totals = new TreeMap<>();
		for (ShardReading reading : read()) {
			Map<String, Map<JobState, Long>> counts = reading.counts();
			if (counts == null) {
				failures.put(reading.shard(), new ShardUnavailableException(reading.shard(),
						"shard '" + reading.shard() + "' does not answer (" + reading.why() + ")", null));
				continue;
			}
			counted.put(reading.shard(), counts);
			counts.forEach((queue, states) -> states.forEach((state, count) -> totals
				.computeIfAbsent(queue, (name) -> new EnumMap<>(JobState.class))
				.merge(state, count, Long::sum)));
		}
		if (!failures.isEmpty()) {
			throw new ShardsPartlyFailedException("counts", counted, failures);
		}
		return totals;
	}

}
