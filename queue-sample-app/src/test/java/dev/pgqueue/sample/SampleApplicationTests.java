package dev.pgqueue.sample;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.sample.report.MonthlyReportRequest;
import dev.pgqueue.sample.report.Report;
import dev.pgqueue.sample.signup.Account;
import dev.pgqueue.sample.signup.WelcomeEmail;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.testkit.AutoConfigureQueueTester;
import dev.pgqueue.testkit.IsolatedQueueSchema;
import dev.pgqueue.testkit.QueueTester;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
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
 * The sample end to end over HTTP, with its pollers, on a real PostgreSQL, in a fresh schema that
 * holds both the sample's tables and pgqueue's (as {@code public} does when the sample runs), dropped
 * after the class. The jobs are waited for and checked with the test kit's {@link QueueTester}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		// The data source comes from the properties below, not from the sample's own choice.
		"sample.database=provided", "sample.reports.work-duration=200ms",
		"pgqueue.maintenance.stats-interval=200ms" })
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class SampleApplicationTests {

	/** The test database, wherever {@link TestDatabase} finds it; the kit gives it a schema of this class's own. */
	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestDatabase database = TestDatabase.get();
		registry.add("spring.datasource.url", database::jdbcUrl);
		if (database.username() != null) {
			registry.add("spring.datasource.username", database::username);
		}
		if (database.password() != null) {
			registry.add("spring.datasource.password", database::password);
		}
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JdbcTemplate jdbcTemplate;

	@Autowired
	private QueueTester queue;

	private RestTestClient client;

	@BeforeEach
	void createClient() {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + this.port).build();
	}

	@Test
	void signUpSendsTheWelcomeEmail() {
		Account account = signUp("ada@example.com", "Ada");
		assertThat(account.name()).isEqualTo("Ada");
		this.queue.assertThatJobs()
			.ofKind(WelcomeEmail.KIND)
			.inQueue("mail")
			.withPayload(new WelcomeEmail(account.id(), "ada@example.com", "Ada"))
			.hasSize(1);

		this.queue.withTimeout(Duration.ofSeconds(20)).awaitIdle("mail");

		this.queue.assertThatJobs().ofKind(WelcomeEmail.KIND).withPayload(WelcomeEmail.class,
				(email) -> email.accountId() == account.id()).allCompleted();
		assertThat(get("/signups/" + account.id(), Account.class).welcomeEmailSent()).isTrue();
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

		this.queue.assertThatJobs()
			.ofKind(WelcomeEmail.KIND)
			.withPayload(WelcomeEmail.class, (email) -> email.email().equalsIgnoreCase("grace@example.com"))
			.hasSize(1);
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

		UUID jobId = UUID.fromString((String) accepted.get("jobId"));
		this.queue.assertThatJobs()
			.ofKind(MonthlyReportRequest.KIND)
			.inQueue("reports")
			.matching("with id " + jobId, (job) -> job.id().equals(jobId))
			.hasSize(1);

		this.queue.withTimeout(Duration.ofSeconds(20)).awaitIdle("reports");

		this.queue.assertThatJobs().ofKind(MonthlyReportRequest.KIND).allCompleted();
		assertThat(get("/reports/" + jobId, Report.class)).satisfies((generated) -> {
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
			.isEqualTo("leased")
			.jsonPath("$.components.pgqueue.details.queues.reports.rateLimit.starts")
			.isEqualTo(30);
	}

	@Test
	void theDashboardShowsTheReportQueuesRateLimitInUse() {
		Account account = signUp("katherine@example.com", "Katherine");
		this.client.post()
			.uri("/reports")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("accountId", account.id()))
			.exchange()
			.expectStatus()
			.isAccepted();
		// The report's start was granted by the window, which the dashboard reads back.
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(get("/pgqueue", String.class))
			.containsPattern("rate limit: <span class=\"rate\">[1-9][0-9]* of 30</span> started in the last 1m"));
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

}
