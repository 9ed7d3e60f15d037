package dev.pgqueue;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An operation over every shard that some shards carried out and others did not, because they did
 * not answer or refused: what each shard that answered did is in {@link #results()}, why each other
 * shard failed in {@link #failures()}. Nothing is rolled back on the shards that answered; repeating
 * the operation is safe for those that pgqueue offers (pause, resume, retry and cancel by query).
 */
public class ShardsPartlyFailedException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient Map<String, Object> results;

	private final transient Map<String, RuntimeException> failures;

	public ShardsPartlyFailedException(String operation, Map<String, ?> results,
			Map<String, RuntimeException> failures) {
		super(operation + " failed on shard" + ((failures.size() == 1) ? " " : "s ") + failures.keySet() + " ("
				+ failures.values().iterator().next().getMessage() + ((failures.size() > 1) ? ", …" : "")
				+ ") and was carried out on " + (results.isEmpty() ? "none" : results.keySet().toString())
				+ ". Repeat it once the failed shards answer.", failures.values().iterator().next());
		this.results = Collections.unmodifiableMap(new LinkedHashMap<>(results));
		this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
	}

	/** What each shard that answered returned, by shard. */
	public Map<String, Object> results() {
		return this.results;
	}

	/** Why each other shard failed, by shard. */
	public Map<String, RuntimeException> failures() {
		return this.failures;
	}

}
