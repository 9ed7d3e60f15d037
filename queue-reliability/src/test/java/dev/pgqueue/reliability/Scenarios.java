package dev.pgqueue.reliability;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.pgqueue.QueueMode;

/** The worker settings the scenarios start from. */
final class Scenarios {

	private Scenarios() {
	}

	/**
	 * Transactional: two batches of 20 at once per worker. Leased: eight jobs at once per worker
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
