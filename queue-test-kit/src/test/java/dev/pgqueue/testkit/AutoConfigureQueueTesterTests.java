package dev.pgqueue.testkit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.annotation.ImportCandidates;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code @AutoConfigureQueueTester} imports the tester's auto-configuration, and nothing else. */
class AutoConfigureQueueTesterTests {

	@Test
	void importsTheQueueTestersAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfigureQueueTester.class, getClass().getClassLoader()))
			.containsExactly(QueueTesterAutoConfiguration.class.getName());
	}

}
