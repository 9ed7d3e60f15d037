package dev.pgqueue.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Whether {@code pgqueue.shards} names any shard: the engine is then one per shard, not one. */
abstract class ShardsCondition extends SpringBootCondition {

	private final boolean wanted;

	ShardsCondition(boolean wanted) {
		this.wanted = wanted;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		boolean configured = !Binder.get(context.getEnvironment())
			.bind("pgqueue.shards", Bindable.mapOf(String.class, QueueShardProperties.class))
			.orElse(Map.of())
			.isEmpty();
		String message = configured ? "pgqueue.shards names shards" : "pgqueue.shards names no shard";
		return (configured == this.wanted) ? ConditionOutcome.match(message) : ConditionOutcome.noMatch(message);
	}

	/** Shards are configured. */
	static final class Configured extends ShardsCondition {

		Configured() {
			super(true);
		}

	}

	/** No shard is configured: one engine on one DataSource. */
	static final class None extends ShardsCondition {

		None() {
			super(false);
		}

	}

}
