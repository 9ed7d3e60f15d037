package dev.pgqueue.engine.job;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;

/** The handlers of this application, by kind. */
public class JobHandlerRegistry {

	/** Read once per job, so reads take no lock. */
	private final Map<String, JobHandler> handlers = new ConcurrentHashMap<>();

	/**
	 * Registers a handler.
	 * @throws IllegalStateException when another handler already claims the kind
	 */
	public void register(JobHandler handler) {
		JobHandler existing = this.handlers.putIfAbsent(handler.kind(), handler);
		if (existing != null) {
			throw new InvalidJobListenerException("Two @JobListener methods handle job kind '" + handler.kind() + "': "
					+ existing.description() + " and " + handler.description(),
					"A kind must have exactly one listener: rename one of the kinds or remove one of the listeners.");
		}
	}

	/** Per-kind settings that override the listeners' annotations. */
	private final Map<String, KindOverride> overrides = new ConcurrentHashMap<>();

	/** Overrides what a kind's listener says about its limits ({@code pgqueue.kinds.<kind>.*}). */
	public void override(KindSettings settings) {
		this.overrides.put(settings.kind(), new KindOverride(settings.maxRunning(), settings.timeout(),
				settings.rateLimit(), settings.rateWeight()));
	}

	/**
	 * Overrides what a kind's listener says about its limits.
	 * @param maxRunning most jobs of the kind running at once, 0 for none; {@code null} keeps the
	 * listener's
	 * @param timeout timeout of one attempt; {@code null} keeps the listener's
	 */
	public void override(String kind, @Nullable Integer maxRunning, @Nullable Duration timeout) {
		override(new KindSettings(kind, maxRunning, timeout));
	}

	/** Most jobs of a kind running at once across every instance; 0 for no limit. */
	public int maxRunningOf(String kind) {
		KindOverride override = this.overrides.get(kind);
		if (override != null && override.maxRunning() != null) {
			return override.maxRunning();
		}
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.maxRunning() : 0;
	}

	/** The timeout of one attempt of a kind, or {@code null} for its queue's. */
	public @Nullable Duration timeoutOf(String kind) {
		KindOverride override = this.overrides.get(kind);
		if (override != null && override.timeout() != null) {
			return override.timeout();
		}
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.timeout() : null;
	}

	/** Whether {@code pgqueue.kinds.<kind>.timeout} sets the kind's timeout. */
	public boolean timeoutOverridden(String kind) {
		KindOverride override = this.overrides.get(kind);
		return override != null && override.timeout() != null;
	}

	/** At most so many jobs of a kind start per period across every instance; {@code null} for no limit. */
	public @Nullable RateLimit rateLimitOf(String kind) {
		KindOverride override = this.overrides.get(kind);
		if (override != null && override.rateLimit() != null) {
			return override.rateLimit();
		}
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.rateLimit() : null;
	}

	/** Whether {@code pgqueue.kinds.<kind>.rate-limit} sets the kind's rate limit. */
	public boolean rateLimitOverridden(String kind) {
		KindOverride override = this.overrides.get(kind);
		return override != null && override.rateLimit() != null;
	}

	/** Units of each rate limit one job of a kind uses when it starts; 1 unless said otherwise. */
	public int rateWeightOf(String kind) {
		KindOverride override = this.overrides.get(kind);
		if (override != null && override.rateWeight() != null) {
			return override.rateWeight();
		}
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.rateWeight() : 1;
	}

	/** Whether {@code pgqueue.kinds.<kind>.rate-weight} sets the kind's weight. */
	public boolean rateWeightOverridden(String kind) {
		KindOverride override = this.overrides.get(kind);
		return override != null && override.rateWeight() != null;
	}

	private record KindOverride(@Nullable Integer maxRunning, @Nullable Duration timeout,
			@Nullable RateLimit rateLimit, @Nullable Integer rateWeight) {
	}

	/** The handler of a kind, or {@code null}. */
	public @Nullable JobHandler find(String kind) {
		return this.handlers.get(kind);
	}

	/** The queue this application runs a kind in, or {@code null} when it has no listener for it. */
	public @Nullable String queueOf(String kind) {
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.queue() : null;
	}

	/** Queues that have at least one listener, sorted. */
	public Set<String> queues() {
		Set<String> queues = new TreeSet<>();
		this.handlers.values().forEach((handler) -> queues.add(handler.queue()));
		return queues;
	}

	/** Kinds with a listener in the given queue, sorted. */
	public String[] kindsOf(String queue) {
		Set<String> kinds = new TreeSet<>();
		this.handlers.values().stream().filter((h) -> h.queue().equals(queue)).forEach((h) -> kinds.add(h.kind()));
		return kinds.toArray(new String[0]);
	}

}
