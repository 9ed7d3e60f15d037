package dev.pgqueue.autoconfigure;

import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who sees a job's payload and output as they are, as {@code management.endpoint.pgqueue.show-values}
 * and {@code roles} decide: the web extension asks the caller's {@link SecurityContext}, the endpoint
 * itself (JMX) has none.
 */
class QueueEndpointShowValuesTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_endpoint_show");

	private static final String PAYLOAD = "{\"secret\": \"s3cr3t\"}";

	private static final String OUTPUT = "{\"receipt\": \"r-42\"}";

	private static final String ERROR = "java.lang.IllegalStateException: card of Ann Smith declined\n"
			+ "\tat com.acme.Billing.charge(Billing.java:42)";

	private static final String MASKED_ERROR = "java.lang.IllegalStateException: ******\n"
			+ "\tat com.acme.Billing.charge(Billing.java:42)";

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		// An application that only enqueues: the job waits, nothing runs it.
		.withPropertyValues("pgqueue.enabled=false", "management.endpoints.web.exposure.include=pgqueue");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void hidesPayloadAndOutputByDefault() {
		this.contextRunner.run((context) -> {
			UUID id = jobWithOutput(context);
			JobDescriptor job = viewAs(context, new Caller("ops", "OPS"), id);
			assertThat(job.payload()).isEqualTo(JobDescriptor.HIDDEN);
			assertThat(job.output()).isEqualTo(JobDescriptor.HIDDEN);
			assertThat(context.getBean(QueueEndpoint.class).job("jobs", id.toString(), true, true,
					false)).extracting("payload").isEqualTo(JobDescriptor.HIDDEN);
			// Not asked for: not there at all.
			JobDescriptor plain = (JobDescriptor) context.getBean(QueueEndpointWebExtension.class)
				.job(new Caller("ops", "OPS"), "jobs", id.toString(), null, null)
				.getBody();
			assertThat(plain.payload()).isNull();
			assertThat(plain.output()).isNull();
		});
	}

	@Test
	void showsThemToEveryoneWithAlways() {
		this.contextRunner.withPropertyValues("management.endpoint.pgqueue.show-values=always").run((context) -> {
			UUID id = jobWithOutput(context);
			JobDescriptor job = viewAs(context, Caller.ANONYMOUS, id);
			assertThat(job.payload()).isEqualTo(PAYLOAD);
			assertThat(job.output()).isEqualTo(OUTPUT);
		});
	}

	@Test
	void showsThemWhenAuthorizedOnlyToACallerWithTheRole() {
		this.contextRunner
			.withPropertyValues("management.endpoint.pgqueue.show-values=when-authorized",
					"management.endpoint.pgqueue.roles=PGQUEUE_PAYLOADS")
			.run((context) -> {
				UUID id = jobWithOutput(context);
				JobDescriptor allowed = viewAs(context, new Caller("dpo", "PGQUEUE_PAYLOADS"), id);
				assertThat(allowed.payload()).isEqualTo(PAYLOAD);
				assertThat(allowed.output()).isEqualTo(OUTPUT);
				JobDescriptor otherRole = viewAs(context, new Caller("ops", "OPS"), id);
				assertThat(otherRole.payload()).isEqualTo(JobDescriptor.HIDDEN);
				assertThat(otherRole.output()).isEqualTo(JobDescriptor.HIDDEN);
				assertThat(viewAs(context, Caller.ANONYMOUS, id).payload()).isEqualTo(JobDescriptor.HIDDEN);
			});
	}

	@Test
	void showsThemWhenAuthorizedToAnyAuthenticatedCallerWithoutRoles() {
		this.contextRunner.withPropertyValues("management.endpoint.pgqueue.show-values=when-authorized")
			.run((context) -> {
				UUID id = jobWithOutput(context);
				assertThat(viewAs(context, new Caller("ops"), id).payload()).isEqualTo(PAYLOAD);
				assertThat(viewAs(context, Caller.ANONYMOUS, id).payload()).isEqualTo(JobDescriptor.HIDDEN);
			});
	}

	@Test
	void theEndpointWithoutASecurityContextCountsWhenAuthorizedAsAllowedAndNeverAsNot() {
		this.contextRunner.withPropertyValues("management.endpoint.pgqueue.show-values=when-authorized")
			.run((context) -> {
				UUID id = jobWithOutput(context);
				assertThat(context.getBean(QueueEndpoint.class).job("jobs", id.toString(), true, null))
					.extracting("payload")
					.isEqualTo(PAYLOAD);
			});
		this.contextRunner.run((context) -> {
			UUID id = jobWithOutput(context);
			assertThat(context.getBean(QueueEndpoint.class).job("jobs", id.toString(), true, null))
				.extracting("payload")
				.isEqualTo(JobDescriptor.HIDDEN);
		});
	}

	@Test
	void theMessagesOfErrorsAttemptsAndProgressAreValuesToo() {
		this.contextRunner
			.withPropertyValues("management.endpoint.pgqueue.show-values=when-authorized",
					"management.endpoint.pgqueue.roles=PGQUEUE_PAYLOADS")
			.run((context) -> {
				UUID id = jobWithMessages(context);
				Caller allowed = new Caller("dpo", "PGQUEUE_PAYLOADS");
				JobDescriptor shown = viewAs(context, allowed, id);
				assertThat(shown.lastError()).isEqualTo(ERROR);
				assertThat(shown.attempts()).singleElement()
					.satisfies((attempt) -> assertThat(attempt.message()).isEqualTo("card of Ann Smith declined"));
				assertThat(shown.progress().message()).isEqualTo("invoices of Ann Smith");
				assertThat(listedAs(context, allowed, id).lastError()).isEqualTo(ERROR);

				for (Caller other : List.of(new Caller("ops", "OPS"), Caller.ANONYMOUS)) {
					JobDescriptor hidden = viewAs(context, other, id);
					assertThat(hidden.lastError()).isEqualTo(MASKED_ERROR);
					assertThat(hidden.attempts()).singleElement().satisfies((attempt) -> {
						assertThat(attempt.error()).isEqualTo("java.lang.IllegalStateException");
						assertThat(attempt.message()).isEqualTo(JobDescriptor.HIDDEN);
					});
					assertThat(hidden.progress().message()).isEqualTo(JobDescriptor.HIDDEN);
					assertThat(hidden.progress().percent()).isEqualTo(40);
					assertThat(listedAs(context, other, id).lastError()).as("in a list of jobs").isEqualTo(MASKED_ERROR);
				}
			});
		// Never (the default): not even to a caller with the roles, nor through the endpoint itself (JMX).
		this.contextRunner.withPropertyValues("management.endpoint.pgqueue.roles=PGQUEUE_PAYLOADS").run((context) -> {
			UUID id = jobWithMessages(context);
			assertThat(viewAs(context, new Caller("dpo", "PGQUEUE_PAYLOADS"), id).lastError()).isEqualTo(MASKED_ERROR);
			JobsDescriptor page = (JobsDescriptor) context.getBean(QueueEndpoint.class)
				.jobs("jobs", "show", null, null, null, null, null, null, null, null, null, null);
			assertThat(page.jobs()).filteredOn((job) -> job.id().equals(id)).singleElement()
				.satisfies((job) -> assertThat(job.lastError()).isEqualTo(MASKED_ERROR));
		});
	}

	private static UUID jobWithMessages(AssertableWebApplicationContext context) {
		UUID id = context.getBean(JobClient.class).enqueue(JobRequest.of("show.values", Map.of()).queue("show"));
		JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
		// As a failed attempt and a progress report leave them.
		jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_jobs SET last_error = ?, attempts = ?::jsonb WHERE public_id = ?",
				ERROR, "[{\"attempt\": 1, \"outcome\": \"failed\", \"error\": \"java.lang.IllegalStateException\", "
						+ "\"message\": \"card of Ann Smith declined\"}]", id);
		jdbc.update("INSERT INTO " + SCHEMA.name() + ".pgqueue_job_controls (job_id, progress_percent, progress_message, "
				+ "progress_at) SELECT id, 40, 'invoices of Ann Smith', now() FROM " + SCHEMA.name()
				+ ".pgqueue_jobs WHERE public_id = ?", id);
		return id;
	}

	private static JobDescriptor listedAs(AssertableWebApplicationContext context, SecurityContext caller, UUID id) {
		JobsDescriptor page = (JobsDescriptor) context.getBean(QueueEndpointWebExtension.class)
			.jobs(caller, "jobs", "show", null, null, null, null, null, null, 100, null, null, null)
			.getBody();
		return page.jobs().stream().filter((job) -> job.id().equals(id)).findFirst().orElseThrow();
	}

	@Test
	void noWebExtensionWhenTheEndpointIsNotExposedOverHttp() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=health",
					"spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=pgqueue")
			.run((context) -> assertThat(context).hasSingleBean(QueueEndpoint.class)
				.doesNotHaveBean(QueueEndpointWebExtension.class));
	}

	private static UUID jobWithOutput(AssertableWebApplicationContext context) {
		UUID id = context.getBean(JobClient.class)
			.enqueue(JobRequest.of("show.values", Map.of("secret", "s3cr3t")).queue("show"));
		// As a listener's return value is stored once it completes.
		context.getBean(JdbcTemplate.class)
			.update("UPDATE " + SCHEMA.name() + ".pgqueue_jobs SET output = ?::jsonb WHERE public_id = ?", OUTPUT, id);
		return id;
	}

	private static JobDescriptor viewAs(AssertableWebApplicationContext context, SecurityContext caller, UUID id) {
		return (JobDescriptor) context.getBean(QueueEndpointWebExtension.class)
			.job(caller, "jobs", id.toString(), true, true)
			.getBody();
	}

	/** A caller as a servlet request shows it to Actuator: a principal and the roles it is in. */
	private record Caller(@Nullable Principal principal, Set<String> roles) implements SecurityContext {

		static final Caller ANONYMOUS = new Caller(null, Set.of());

		Caller(String name, String... roles) {
			this(() -> name, Set.of(roles));
		}

		@Override
		public @Nullable Principal getPrincipal() {
			return this.principal;
		}

		@Override
		public boolean isUserInRole(String role) {
			return this.roles.contains(role);
		}

	}

}
