package dev.pgqueue.autoconfigure;

import java.util.Collection;
import java.util.List;

import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.QueueMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The {@code pgqueue.*} meters of each database the engine runs on, in the application's registry:
 * those of one database as they are, those of each shard with a {@code shard} tag naming it, so that a
 * dashboard can add the shards up or tell them apart. Made only when the application defines no
 * {@link QueueMetrics} of its own, which every database then shares.
 */
final class DatabaseMetrics {

	private final MeterRegistry registry;

	private final Collection<String> queues;

	DatabaseMetrics(MeterRegistry registry, Collection<String> queues) {
		this.registry = registry;
		this.queues = List.copyOf(queues);
	}

	/**
	 * The meters of one database.
	 * @param shard the shard's name; {@code null} for the engine's one database
	 */
	QueueMetrics of(@Nullable String shard) {
		if (shard == null) {
			return new MicrometerQueueMetrics(this.registry, this.queues);
		}
		// A composite over the application's registry stamps its common tag on every meter it registers there.
		CompositeMeterRegistry tagged = new CompositeMeterRegistry(this.registry.config().clock(), List.of(this.registry));
		tagged.config().commonTags("shard", shard);
		return new MicrometerQueueMetrics(tagged, this.queues);
	}

}
