package dev.pgqueue.autoconfigure;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.InvalidQueueConfigurationException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

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

}
