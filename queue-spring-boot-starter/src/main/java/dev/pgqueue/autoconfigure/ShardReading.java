package dev.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.pgqueue.JobState;
import org.jspecify.annotations.Nullable;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.shards.ShardLayout;

import org.springframework.dao.DataAccessException;

/**
 * One shard as the endpoint and the dashboard show it: whether it answers, how many slots it owns and
 * its own jobs by queue and state.
 *
 * @param shard the shard's name
 * @param why why it does not answer, or {@code null} while it does
 * @param slots how many of the fixed slots it owns
 * @param counts its jobs by queue and state, sorted by queue; {@code null} when it does not answer
 */
public record ShardReading(String shard, @Nullable String why, int slots,
		@Nullable Map<String, Map<JobState, Long>> counts) {

	/** Whether the shard answers its probes and its jobs could be counted. */
	public boolean answers() {
		return this.why == null;
	}

	/**
	 * Every shard, in declared order, each read on its own so that one that does not answer leaves the
	 * others' counts. A shard the watch reports down is not read at all: a connection to it would wait
	 * for its pool's connection timeout (30 s by default) before failing.
	 */
	public static List<ShardReading> readAll(QueueEngine engine) {
		Map<String, Integer> slots = engine.layout().map(ShardLayout::slotCounts).orElse(Map.of());
		List<ShardReading> readings = new ArrayList<>();
		for (String shard : engine.shards().names()) {
			int owned = slots.getOrDefault(shard, 0);
			String why = engine.shards().whyDown(shard);
			if (why != null) {
				readings.add(new ShardReading(shard, why, owned, null));
				continue;
			}
			try {
				readings.add(new ShardReading(shard, null, owned, engine.database(shard).admin().counts()));
			}
			catch (DataAccessException ex) {
				// The watch has not noticed yet (its probe runs on a connection it holds), or only the count fails.
				readings.add(new ShardReading(shard, "its jobs could not be counted: " + ex.getMostSpecificCause().getMessage(), owned, null));
			}
		}
		return readings;
	}

}
