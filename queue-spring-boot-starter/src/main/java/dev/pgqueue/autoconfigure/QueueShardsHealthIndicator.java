package dev.pgqueue.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.pgqueue.engine.QueueEngine;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The health of queues spread over shards: each shard's own health as {@link QueueHealthIndicator}
 * reports it, under {@code shards.<name>}, with whether the shard answers and, when it does not, why.
 *
 * <p>{@code DOWN} when no shard answers; else {@link QueueHealthIndicator#DEGRADED} while some shard
 * does not answer (its keyed jobs are refused, the others run); else the worst of the shards' own
 * statuses. As for one engine, Spring Boot's default status order does not know {@code DEGRADED}: list
 * it in {@code management.endpoint.health.status.order} to make it count.
 */
public class QueueShardsHealthIndicator extends AbstractHealthIndicator {

	private final QueueEngine engine;

	private final Map<String, QueueHealthIndicator> indicators = new LinkedHashMap<>();

	public QueueShardsHealthIndicator(QueueEngine engine) {
		super("pgqueue health check failed");
		this.engine = engine;
		engine.shards().names().forEach((shard) -> this.indicators.put(shard, new QueueHealthIndicator(engine.database(shard))));
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, Object> details = new LinkedHashMap<>();
		int down = 0;
		Status worst = Status.UP;
		for (Map.Entry<String, QueueHealthIndicator> entry : this.indicators.entrySet()) {
			String why = this.engine.shards().whyDown(entry.getKey());
			Health health = entry.getValue().health();
			Map<String, Object> shard = new LinkedHashMap<>();
			shard.put("answers", why == null);
			if (why != null) {
				shard.put("why", why);
				down++;
			}
			shard.put("status", health.getStatus().getCode());
			shard.putAll(health.getDetails());
			details.put(entry.getKey(), shard);
			worst = worse(worst, health.getStatus());
		}
		Status status = (down == this.indicators.size()) ? Status.DOWN
				: (down > 0) ? worse(QueueHealthIndicator.DEGRADED, worst) : worst;
		builder.status(status).withDetail("shards", details);
	}

	private static Status worse(Status one, Status other) {
		return (rank(other) > rank(one)) ? other : one;
	}

	private static int rank(Status status) {
		if (Status.DOWN.equals(status)) {
			return 3;
		}
		if (Status.OUT_OF_SERVICE.equals(status)) {
			return 2;
		}
		return QueueHealthIndicator.DEGRADED.equals(status) ? 1 : 0;
	}

}
