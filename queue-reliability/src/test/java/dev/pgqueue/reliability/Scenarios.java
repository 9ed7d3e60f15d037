package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.pgqueue.QueueMode;

/** The worker settings the scenarios start from. */
final class Scenarios {

	/** The heartbeat interval of the bucket scenarios' workers. */
	static final Duration HEARTBEAT = Duration.ofMillis(500);

	private Scenarios() {
	}

	/**
	 * Transactional: two batches of 20 at once per worker, a fixed size (the figures of
	 * docs/reliability.md count batches of 20; scenario 7's entries per scan grow with the batch). Leased: eight jobs at once per worker
	 * under a 3 s lease, the rescuer looking every second. Each job works about 2 ms before it
	 * writes its ledger row.
	 */
	static Map<String, String> options(QueueMode mode) {
		Map<String, String> options = new LinkedHashMap<>();
		options.put("mode", mode.name().toLowerCase(Locale.ROOT));
		options.put("concurrency", (mode == QueueMode.TRANSACTIONAL) ? "2" : "8");
		options.put("batch-size", "20");
		options.put("pool-size", "6");
		options.put("work-ms", "2");
		options.put("lease-ms", "3000");
		options.put("rescue-ms", "1000");
		return options;
	}

	/**
	 * The options of {@link #options(QueueMode)} with bucket assignment: 64 buckets, the members
	 * heartbeating every {@link #HEARTBEAT} (so a member is dead after 1.5 s without one). Leased
	 * jobs work 10 ms, so that a worker killed under load usually dies holding some.
	 */
	static Map<String, String> bucketOptions(QueueMode mode) {
		return options(mode, Map.of("assignment", "buckets", "buckets", Integer.toString(BucketGroup.BUCKETS),
				"heartbeat-ms", Long.toString(HEARTBEAT.toMillis()), "work-ms",
				(mode == QueueMode.LEASED) ? "10" : "2"));
	}

	static Map<String, String> options(QueueMode mode, Map<String, String> overrides) {
		Map<String, String> options = options(mode);
		options.putAll(overrides);
		return options;
	}

	/** A {@code uuid[]} literal, to bind as text and cast. */
	static String uuidArray(Collection<UUID> ids) {
		return ids.stream().map(UUID::toString).collect(Collectors.joining(",", "{", "}"));
	}

	static String name(QueueMode mode) {
		return mode.name().toLowerCase(Locale.ROOT);
	}

}
