package dev.pgqueue.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AssignableTypeFilter;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link QueueEndpointRuntimeHints}: every answer of the endpoint, found on the class
 * path rather than listed, and the info entry can be written by Jackson in a native image.
 */
class QueueEndpointRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	@Test
	void registersEveryAnswerOfTheEndpointAndWhatItHolds() throws Exception {
		new QueueEndpointRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
		scanner.addIncludeFilter(new AssignableTypeFilter(OperationResponseBody.class));
		List<Class<?>> answers = new java.util.ArrayList<>();
		for (BeanDefinition found : scanner.findCandidateComponents("dev.pgqueue.autoconfigure")) {
			answers.add(ClassUtils.forName(found.getBeanClassName(), getClass().getClassLoader()));
		}
		assertThat(answers).hasSizeGreaterThanOrEqualTo(11);
		assertThat(answers).allSatisfy((answer) -> assertThat(RuntimeHintsPredicates.reflection().onType(answer))
			.as("binding hints for %s", answer.getName())
			.accepts(this.hints));
		assertThat(RuntimeHintsPredicates.reflection().onType(JobDescriptor.AttemptDescriptor.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(QueuesDescriptor.SignalsDescriptor.class))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(QueuesDescriptor.ShardQueueDescriptor.class))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(QueuesDescriptor.class, "queues"))
			.accepts(this.hints);
	}

	@Test
	void registersTheInfoEntry() {
		new QueueEndpointRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		assertThat(RuntimeHintsPredicates.reflection().onType(QueueInfoContributor.PgqueueInfo.class))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(QueueInfoContributor.QueueInfo.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(QueueInfoContributor.SchemaInfo.class, "version"))
			.accepts(this.hints);
	}

}
