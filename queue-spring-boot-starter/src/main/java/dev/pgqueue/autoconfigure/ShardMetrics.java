package dev.pgqueue.autoconfigure;

import java.util.Collection;
import java.util.List;

import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.QueueMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;

/**
 * Each shard's metrics: the same {@code pgqueue.*} meters as one engine's, in the application's
 * registry, each with a {@code shard} tag naming its shard, so that a dashboard can add the shards up
 * or tell them apart.
 */
final class ShardMetrics {

	private final MeterRegistry registry;

	private final Collection<String> queues;

	ShardMetrics(MeterRegistry registry, Collection<String> queues) {
		this.registry = registry;
		this.queues = List.copyOf(queues);
	}

	/** The metrics of one shard's engine. */
	QueueMetrics forShard(String shard) {
		// A composite over the application's registry stamps its common tag on every meter it registers there.
		CompositeMeterRegistry tagged = new CompositeMeterRegistry(this.registry.config().clock(), List.of(this.registry));
		tagged.config().commonTags("shard", shard);
		return new MicrometerQueueMetrics(tagged, this.queues);
	}

}
