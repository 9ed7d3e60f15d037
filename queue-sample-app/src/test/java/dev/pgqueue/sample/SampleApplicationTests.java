package dev.pgqueue.sample;

import java.time.Duration;
import java.util.Map;

import dev.pgqueue.sample.report.Report;
import dev.pgqueue.sample.signup.Account;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample end to end over HTTP, on a real PostgreSQL, in a fresh schema that holds both the
 * sample's tables and pgqueue's (as {@code public} does when the sample runs).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		// The data source comes from the properties below, not from the sample's own choice.
		"sample.database=provided", "sample.reports.work-duration=200ms",
		"pgqueue.maintenance.stats-interval=200ms" })
class SampleApplicationTests {

	private static final TestSchema schema = TestDatabase.get().createSchema("sample");

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestDatabase database = schema.database();
		registry.add("spring.datasource.url", database::jdbcUrl);
		if (database.username() != null) {
			registry.add("spring.datasource.username", database::username);
		}
		if (database.password() != null) {
			registry.add("spring.datasource.password", database::password);
		}
		registry.add("spring.datasource.hikari.schema", schema::name);
		registry.add("spring.flyway.schemas", schema::name);
		registry.add("pgqueue.schema.name", schema::name);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JdbcTemplate jdbcTemplate;

	private RestTestClient client;

	@BeforeEach
	void createClient() {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + this.port).build();
	}

	@Test
	void signUpSendsTheWelcomeEmail() {
		Account account = signUp("ada@example.com", "Ada");
		assertThat(account.name()).isEqualTo("Ada");

		await().atMost(Duration.ofSeconds(20))
			.until(() -> get("/signups/" + account.id(), Account.class).welcomeEmailSent());
	}

	@Test
	void duplicateSignUpIsRejectedAndEnqueuesNoSecondWelcomeEmail() {
		signUp("grace@example.com", "Grace");

		this.client.post()
			.uri("/signups")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("email", "Grace@Example.com", "name", "Grace again"))
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.CONFLICT);

		assertThat(this.jdbcTemplate.queryForObject("SELECT count(*) FROM pgqueue_jobs "
				+ "WHERE kind = 'email.welcome' AND lower(payload ->> 'email') = 'grace@example.com'", Integer.class))
			.isOne();
		assertThat(this.jdbcTemplate.queryForObject(
				"SELECT count(*) FROM accounts WHERE lower(email) = 'grace@example.com'", Integer.class))
			.isOne();
	}

	@Test
	void monthlyReportIsGeneratedInTheLeasedQueue() {
		Account account = signUp("edsger@example.com", "Edsger");
		Map<String, Object> accepted = this.client.post()
			.uri("/reports")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("accountId", account.id()))
			.exchange()
			.expectStatus()
			.isAccepted()
			.expectBody(new ParameterizedTypeReference<Map<String, Object>>() {
			})
			.returnResult()
			.getResponseBody();

		String report = "/reports/" + accepted.get("jobId");
		// 404 until the job has written its report.
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.client.get().uri(report).exchange().returnResult().getStatus().is2xxSuccessful());
		assertThat(get(report, Report.class)).satisfies((generated) -> {
			assertThat(generated.accountId()).isEqualTo(account.id());
			assertThat(generated.attempt()).isOne();
		});
	}

	@Test
	void prometheusShowsTheQueueMetrics() {
		signUp("barbara@example.com", "Barbara");

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(get("/actuator/prometheus", String.class))
			.contains("pgqueue_poll_cycle_seconds_bucket{")
			.contains("pgqueue_jobs_completed_total{kind=\"email.welcome\",queue=\"mail\"}"));
	}

	@Test
	void healthShowsPgqueueUp() {
		this.client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.components.pgqueue.status")
			.isEqualTo("UP")
			.jsonPath("$.components.pgqueue.details.queues.mail.mode")
			.isEqualTo("transactional")
			.jsonPath("$.components.pgqueue.details.queues.reports.mode")
			.isEqualTo("leased");
	}

	private Account signUp(String email, String name) {
		return this.client.post()
			.uri("/signups")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("email", email, "name", name))
			.exchange()
			.expectStatus()
			.isCreated()
			.expectBody(Account.class)
			.returnResult()
			.getResponseBody();
	}

	private <T> T get(String path, Class<T> type) {
		return this.client.get()
			.uri(path)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(type)
			.returnResult()
			.getResponseBody();
	}

	/** Drops the schema when the context closes, after the pollers have stopped. */
	@TestConfiguration(proxyBeanMethods = false)
	static class DropSchemaOnClose {

		@Bean
		DisposableBean dropTestSchema() {
			return schema::close;
		}

	}

}
