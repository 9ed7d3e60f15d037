package dev.pgqueue.autoconfigure;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.InvalidQueueConfigurationException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

class QueueFailureAnalyzersTests {

	@Test
	void describesAnInvalidSettingByItsKeyAndSaysWhatToDo() {
		Throwable failure = new BeanCreationException("pgqueueJobPollerFactory",
				"Failed to instantiate", InvalidQueueConfigurationException.class.cast(
						new InvalidQueueConfigurationException("pgqueue.queues.mail.concurrency",
								"pgqueue.queues.mail.concurrency must be at least 1, was 0",
								"Set pgqueue.queues.mail.concurrency to 1 or more.")));
		FailureAnalysis analysis = analyze(failure);
		assertThat(analysis.getDescription())
			.isEqualTo("Invalid pgqueue configuration: pgqueue.queues.mail.concurrency must be at least 1, was 0");
		assertThat(analysis.getAction()).isEqualTo("Set pgqueue.queues.mail.concurrency to 1 or more.");
	}

	@Test
	void describesAnInvalidListenerAndSaysWhatToDo() {
		Throwable failure = new IllegalStateException("wrapped", new InvalidJobListenerException(
				"Two @JobListener methods handle job kind 'x': A.a() and B.b()", "Rename one of the kinds."));
		FailureAnalysis analysis = analyze(failure);
		assertThat(analysis.getDescription()).contains("Invalid @JobListener", "kind 'x'", "A.a()", "B.b()");
		assertThat(analysis.getAction()).isEqualTo("Rename one of the kinds.");
	}

	private static FailureAnalysis analyze(Throwable failure) {
		// Loaded the way Spring Boot loads them, so a wrong spring.factories entry fails here. Analyzers of
		// other modules that need constructor arguments are left out.
		return SpringFactoriesLoader.forDefaultResourceLocation(QueueFailureAnalyzersTests.class.getClassLoader())
			.load(FailureAnalyzer.class, (factoryType, factoryImplementationName, ex) -> {
			})
			.stream()
			.filter((analyzer) -> analyzer.getClass().getName().startsWith("dev.pgqueue"))
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(java.util.Objects::nonNull)
			.findFirst()
			.orElseThrow(() -> new AssertionError("No pgqueue failure analyzer analyzed " + failure));
	}

}
