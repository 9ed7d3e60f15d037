package dev.pgqueue.modulith;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobRequest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.Externalized;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * When the externalizer is set up, and what it makes of an event, with a {@link JobClient} that
 * records the requests instead of a database (the database's part is in
 * {@link EventExternalizationTests}).
 */
class QueueEventExternalizationAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(EventExternalizationAutoConfiguration.class,
				QueueEventExternalizationAutoConfiguration.class))
		.withUserConfiguration(Application.class);

	@Test
	void externalizesToPgqueueWhenModulithAndAJobClientAreThere() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(JobEventExternalizer.class));
	}

	@Test
	void backsOffWhenModulithsExternalizationIsOff() {
		this.contextRunner.withPropertyValues("spring.modulith.events.externalization.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(JobEventExternalizer.class));
	}

	@Test
	void backsOffWithoutAJobClient() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(EventExternalizationAutoConfiguration.class,
					QueueEventExternalizationAutoConfiguration.class))
			.withBean(EventExternalizationConfiguration.class, Application::externalizeAnnotated)
			.run((context) -> assertThat(context).doesNotHaveBean(JobEventExternalizer.class));
	}

	@Test
	void backsOffWithoutModulithsEvents() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(EventExternalizationConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(JobEventExternalizer.class));
	}

	@Test
	void evaluatesTheKeyOnTheEventAndLeavesABlankKeyOut() {
		this.contextRunner.run((context) -> {
			context.publishEvent(new Keyed("acme"));
			context.publishEvent(new Keyed(" "));
			context.publishEvent("not externalized");

			List<JobRequest> requests = context.getBean(RecordingJobClient.class).requests;
			assertThat(requests).extracting(JobRequest::kind).containsExactly("accounts.changed", "accounts.changed");
			assertThat(requests).extracting(JobRequest::concurrencyKey).containsExactly("acme", null);
		});
	}

	@Test
	void neverExternalizesPgqueuesOwnJobEventsWhichWouldEnqueueJobsWithoutEnd() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(EventExternalizationAutoConfiguration.class,
					QueueEventExternalizationAutoConfiguration.class))
			.withBean(RecordingJobClient.class)
			.withBean(EventExternalizationConfiguration.class,
					() -> EventExternalizationConfiguration.externalizing().select((event) -> true).build())
			.run((context) -> {
				context.publishEvent(new JobEvent.Enqueued(UUID.randomUUID(), "orders.placed", "orders"));
				context.publishEvent(new Keyed("acme"));

				assertThat(context.getBean(RecordingJobClient.class).requests).extracting(JobRequest::payload)
					.containsExactly(new Keyed("acme"));
			});
	}

	@Test
	void aTargetThatIsNoJobKindFailsThePublishingSayingWhatToChange() {
		this.contextRunner.run((context) -> assertThatIllegalArgumentException()
			.isThrownBy(() -> context.publishEvent(new LongTarget()))
			.withMessageContaining("Event " + LongTarget.class.getName() + " is externalized to target 'x")
			.withMessageContaining("longer than 200 characters")
			.withMessageContaining("Give its @Externalized a target of at most 200 characters"));
	}

	@Externalized("accounts.changed::#{account()}")
	record Keyed(String account) {
	}

	@Externalized("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			+ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	record LongTarget() {
	}

	@Configuration(proxyBeanMethods = false)
	static class Application {

		@Bean
		RecordingJobClient jobClient() {
			return new RecordingJobClient();
		}

		/** As Modulith's default, for events of any package (a runner has no auto-configuration packages). */
		@Bean
		EventExternalizationConfiguration eventExternalizationConfiguration() {
			return externalizeAnnotated();
		}

		static EventExternalizationConfiguration externalizeAnnotated() {
			return EventExternalizationConfiguration.externalizing()
				.select(EventExternalizationConfiguration.annotatedAsExternalized())
				.build();
		}

	}

	static class RecordingJobClient implements JobClient {

		final List<JobRequest> requests = new CopyOnWriteArrayList<>();

		@Override
		public UUID enqueue(JobRequest request) {
			this.requests.add(request);
			return UUID.randomUUID();
		}

		@Override
		public List<UUID> enqueueAll(List<JobRequest> requests) {
			requests.forEach(this::enqueue);
			return List.of();
		}

	}

}
