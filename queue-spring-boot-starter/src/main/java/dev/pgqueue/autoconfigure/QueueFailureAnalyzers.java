package dev.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.autoconfigure.KnownKeys.Explanation;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.annotation.Order;

/**
 * Turns pgqueue's start-up failures into Spring Boot's "APPLICATION FAILED TO START" report: what
 * is wrong, naming the setting or listener, and what to do.
 */
final class QueueFailureAnalyzers {

	private QueueFailureAnalyzers() {
	}

	static class InvalidConfiguration extends AbstractFailureAnalyzer<InvalidQueueConfigurationException> {

		@Override
		protected FailureAnalysis analyze(Throwable rootFailure, InvalidQueueConfigurationException cause) {
			return new FailureAnalysis("Invalid pgqueue configuration: " + cause.getMessage(), cause.action(), cause);
		}

	}

	static class InvalidListener extends AbstractFailureAnalyzer<InvalidJobListenerException> {

		@Override
		protected FailureAnalysis analyze(Throwable rootFailure, InvalidJobListenerException cause) {
			return new FailureAnalysis("Invalid @JobListener: " + cause.getMessage(), cause.action(), cause);
		}

	}

	static class MisfittingBeans extends AbstractFailureAnalyzer<QueueInfrastructure.QueueBeansException> {

		@Override
		protected FailureAnalysis analyze(Throwable rootFailure, QueueInfrastructure.QueueBeansException cause) {
			return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
		}

	}

	/**
	 * Keys under {@code pgqueue} that {@link QueueProperties} does not bind, each with its value, where
	 * it was set, and the key it is most likely a typo of. Ordered ahead of Spring Boot's own analyzer
	 * of unbound properties, which would report the same keys without a suggestion.
	 */
	@Order(0)
	static class UnknownKeys extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> {

		@Override
		protected @Nullable FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
			Set<ConfigurationProperty> unbound = cause.getUnboundProperties();
			if (unbound.isEmpty()
					|| !unbound.stream().allMatch((property) -> KnownKeys.ROOT.isAncestorOf(property.getName()))) {
				return null;
			}
			StringBuilder description = new StringBuilder(
					(unbound.size() == 1) ? "Unknown pgqueue key:" : "Unknown pgqueue keys:");
			List<String> actions = new ArrayList<>();
			for (ConfigurationProperty property : unbound) {
				Explanation explanation = KnownKeys.explain(property.getName());
				description.append(String.format("%n%n    Property: %s", property.getName()));
				// No value: a misspelt key may hold a password.
				if (property.getOrigin() != null) {
					description.append(String.format("%n    Origin: %s", property.getOrigin()));
				}
				description.append(String.format("%n    Reason: %s", explanation.reason()));
				actions.add(explanation.action());
			}
			return new FailureAnalysis(description.toString(), String.join(System.lineSeparator(), actions), cause);
		}

	}

}
