package dev.pgqueue.metrics;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.pgqueue.JobOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * The counters and handler timers of one kind in one queue, each registered the first time it is
 * needed and then held here, so that counting a job is an array index and an increment.
 * Registering is idempotent in Micrometer, so two threads racing to register one meter get the
 * same meter.
 */
final class KindMeters {

	private final MeterRegistry registry;

	private final String queue;

	private final String kind;

	private final AtomicReferenceArray<@Nullable Counter> finished = new AtomicReferenceArray<>(
			JobOutcome.values().length);

	private final AtomicReferenceArray<@Nullable Timer> durations = new AtomicReferenceArray<>(
			JobOutcome.values().length);

	private volatile @Nullable Counter rescued;

	private volatile @Nullable Counter timedOut;

	KindMeters(MeterRegistry registry, String queue, String kind) {
		this.registry = registry;
		this.queue = queue;
		this.kind = kind;
	}

	void finished(JobOutcome outcome, long nanos) {
		int index = outcome.ordinal();
		Counter counter = this.finished.get(index);
		if (counter == null) {
			counter = counter("pgqueue.jobs." + tag(outcome));
			this.finished.set(index, counter);
		}
		counter.increment();
		if (outcome == JobOutcome.RELEASED) {
			return;
		}
		Timer duration = this.durations.get(index);
		if (duration == null) {
			duration = Timer.builder("pgqueue.handler.duration")
				.description("Time listener methods take to run one attempt")
				.tags("queue", this.queue, "kind", this.kind, "outcome", tag(outcome))
				.register(this.registry);
			this.durations.set(index, duration);
		}
		duration.record(nanos, TimeUnit.NANOSECONDS);
	}

	void rescued() {
		Counter counter = this.rescued;
		if (counter == null) {
			counter = counter("pgqueue.jobs.rescued");
			this.rescued = counter;
		}
		counter.increment();
	}

	void timedOut() {
		Counter counter = this.timedOut;
		if (counter == null) {
			counter = counter("pgqueue.jobs.timed.out");
			this.timedOut = counter;
		}
		counter.increment();
	}

	private Counter counter(String name) {
		return Counter.builder(name).tags("queue", this.queue, "kind", this.kind).register(this.registry);
	}

	private static String tag(JobOutcome outcome) {
		return outcome.name().toLowerCase(Locale.ROOT);
	}

}
