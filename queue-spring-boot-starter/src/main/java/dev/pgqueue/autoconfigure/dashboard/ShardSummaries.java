package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

import dev.pgqueue.autoconfigure.QueueShards;
import dev.pgqueue.autoconfigure.ShardReading;
import org.jspecify.annotations.Nullable;

/**
 * Reads each shard for the overview's Shards section, at most once per {@code minReadingGap} however
 * many pages ask, as {@link QueueSummaries} counts the jobs: counting reads every row of each shard's
 * table.
 */
final class ShardSummaries {

	private final QueueShards shards;

	private final long minReadingGapNanos;

	private final LongSupplier nanoTime;

	private @Nullable List<ShardReading> lastRead;

	private long lastReadAt;

	ShardSummaries(QueueShards shards, Duration minReadingGap) {
		this(shards, minReadingGap, System::nanoTime);
	}

	ShardSummaries(QueueShards shards, Duration minReadingGap, LongSupplier nanoTime) {
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

}
