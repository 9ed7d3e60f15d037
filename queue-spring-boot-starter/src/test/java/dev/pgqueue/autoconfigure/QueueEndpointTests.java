package dev.pgqueue.autoconfigure;

import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code pgqueue} endpoint over real HTTP, in an application that runs a queue with the starter
 * and Actuator, its writes allowed ({@code management.endpoint.pgqueue.access=unrestricted}) and
 * payloads shown to callers in role {@code OPS}. A servlet filter stands in for Spring Security's: it
 * authenticates the request as the user its {@code X-User} header names, in the roles of its
 * {@code X-Roles} header ({@code OPS} unless given), so that the log and the pause table name who
 * asked and Actuator sees the request's principal.
 */
@SpringBootTest(classes = QueueEndpointTests.EndpointApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,pgqueue",
				"management.endpoint.pgqueue.access=unrestricted", "management.endpoint.health.show-details=always",
				"management.endpoint.pgqueue.show-values=when-authorized", "management.endpoint.pgqueue.roles=OPS",
				"pgqueue.queues.endpoint.poll-interval=100ms", "pgqueue.maintenance.stats-interval=200ms",
				"pgqueue.shutdown-timeout=5s", "pgqueue.schedules.endpoint-tick.cron=0 0 3 * * *",
				"pgqueue.schedules.endpoint-tick.kind=endpoint.work",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
class QueueEndpointTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_endpoint");

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		SCHEMA.register(registry);
	}

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private QueueEngine engine;

	private RestTestClient client;

	@BeforeEach
	void createClient() {
		this.client = RestTestClient.bindToServer().baseUrl("http://localhost:" + this.port + "/actuator/pgqueue").build();
	}

	@Test
	void showsTheQueuesWithTheirSignals() {
		UUID id = this.jobs.enqueue(JobRequest.of("endpoint.work", "hello").queue("endpoint"));
		await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, id)));

		await().atMost(TIMEOUT).untilAsserted(() -> {
			Map<String, Object> body = get("").expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody();
			Map<String, Object> queue = map(map(body.get("queues")).get("endpoint"));
			assertThat(queue).containsEntry("paused", false)
				.containsEntry("polled", true)
				.containsEntry("mode", "transactional")
				.containsKeys("depth", "oldestAge", "running", "scheduled");
			// The assessment is the band of the p99 shown beside it; which band depends on the machine's load.
			Map<String, Object> signals = map(queue.get("signals"));
			assertThat(signals).containsKeys("pollCycleP99", "jobsClaimed", "unproductiveClaims");
			assertThat(signals.get("pollCycle")).isEqualTo(dev.pgqueue.metrics.PollCycleAssessment
				.of(Duration.parse((String) signals.get("pollCycleP99")))
				.label());
			assertThat(map(body.get("lockWaits"))).containsKeys("waiting", "applicationName");
			assertThat(map(body.get("writes"))).containsEntry("enabled", true).doesNotContainKey("reason");
			// Without pgqueue.shards there is no shard to show, not even an empty list of them.
			assertThat(body).doesNotContainKey("shards");
		});
	}

	@Test
	void readsEachQueuesHistoryInSteps() {
		UUID id = this.jobs.enqueue(JobRequest.of("endpoint.work", "history").queue("endpoint"));
		await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, id)));
		EngineInternals.of(this.engine).historyFlusher().flush();

		Map<String, Object> body = get("/history?hours=1&step=1").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(body).containsEntry("window", "PT1H").containsEntry("step", "PT1M");
		List<Map<String, Object>> points = list(map(body.get("queues")).get("endpoint"));
		assertThat(points).hasSize(60);
		assertThat(points.get(0)).containsKeys("start", "completed", "failed", "retried", "meanWaitMs", "maxWaitMs",
				"meanRunMs", "maxRunMs");
		assertThat(points.stream().mapToLong((point) -> ((Number) point.get("completed")).longValue()).sum())
			.isPositive();
		assertThat(map(get("/history").expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody()))
			.containsEntry("window", "PT6H")
			.containsEntry("step", "PT5M");
		get("/history?hours=1&step=0").expectStatus().isBadRequest();
	}

	@Test
	void findsListsAndRetriesAFailedJob() {
		UUID id = this.jobs.enqueue(JobRequest.of("endpoint.fail-once", Map.of("secret", "s3cr3t")).queue("endpoint")
			.maxAttempts(1)
			.tags("endpoint-check")
			.concurrencyKey("account-7")
			.rateWeight(3));
		await().atMost(TIMEOUT).until(() -> "failed".equals(SCHEMA.stateOf(this.jdbc, id)));

		Map<String, Object> page = get("/jobs?queue=endpoint&state=failed&limit=10").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		List<Map<String, Object>> listed = list(page.get("jobs"));
		assertThat(listed).extracting((job) -> job.get("id")).contains(id.toString());
		List<Map<String, Object>> tagged = list(get("/jobs?tag=endpoint-check").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody()
			.get("jobs"));
		assertThat(tagged).extracting((job) -> job.get("id")).containsExactly(id.toString());
		assertThat(tagged.get(0)).containsEntry("tags", List.of("endpoint-check"));
		Map<String, Object> job = get("/jobs/" + id).expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody();
		assertThat(job).containsEntry("state", "failed").containsEntry("kind", "endpoint.fail-once").doesNotContainKey("payload");
		assertThat(job).containsEntry("concurrencyKey", "account-7").containsEntry("rateWeight", 3);
		// The error's message is a value too: hidden from the anonymous caller, as the payload is.
		assertThat((String) job.get("lastError")).contains(": ******").doesNotContain("first run fails");
		assertThat((String) getAs("/jobs/" + id, "ops-day", "OPS").expectBody(JSON).returnResult().getResponseBody()
			.get("lastError")).contains("first run fails");
		assertThat(getAs("/jobs/" + id + "?payload=true", "ops-day", "OPS").expectBody(JSON).returnResult()
			.getResponseBody()).containsEntry("payload", "{\"secret\": \"s3cr3t\"}");
		// show-values=when-authorized with roles=OPS: anyone else sees it masked, as Boot masks values.
		assertThat(getAs("/jobs/" + id + "?payload=true", "visitor", "GUEST").expectBody(JSON).returnResult()
			.getResponseBody()).containsEntry("payload", "******");
		assertThat(get("/jobs/" + id + "?payload=true").expectBody(JSON).returnResult().getResponseBody())
			.containsEntry("payload", "******");

		Map<String, Object> retried = post("/jobs/" + id + "/retry", "ops-day").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(retried).containsEntry("outcome", "applied").containsEntry("state", "available");
		await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, id)));
		Map<String, Object> completed = getAs("/jobs/" + id, "ops-day", "OPS").expectBody(JSON).returnResult()
			.getResponseBody();
		List<Map<String, Object>> attempts = list(completed.get("attempts"));
		assertThat(attempts).extracting((attempt) -> attempt.get("outcome")).containsExactly("failed", "completed");
		assertThat(attempts.get(0)).containsEntry("attempt", 1)
			.containsEntry("error", IllegalStateException.class.getName())
			.containsEntry("message", "first run fails");
		assertThat(completed).containsKey("runTime").containsEntry("snoozes", 0);

		assertThat(post("/jobs/" + id + "/retry", "ops-day").expectStatus()
			.isEqualTo(HttpStatus.CONFLICT)
			.expectBody(JSON)
			.returnResult()
			.getResponseBody()).containsEntry("outcome", "not_allowed").containsEntry("state", "completed");
	}

	@Test
	void cancelsAWaitingJobAndDeletesIt() {
		UUID id = this.jobs.enqueue(JobRequest.of("endpoint.work", "later").queue("endpoint").delay(Duration.ofHours(1)));

		assertThat(post("/jobs/" + id + "/cancel", "ops-night").expectStatus().isOk().expectBody(JSON).returnResult()
			.getResponseBody()).containsEntry("outcome", "applied").containsEntry("state", "cancelled");
		this.client.delete().uri("/jobs/" + id).exchange().expectStatus().isOk();
		get("/jobs/" + id).expectStatus().isNotFound();
		this.client.delete().uri("/jobs/" + id).exchange().expectStatus().isNotFound();
		post("/jobs/" + UUID.randomUUID() + "/cancel", "ops-night").expectStatus().isNotFound();
	}

	@Test
	void refusesAWriteACrossSiteFormOrAPageOfAnotherSiteCouldSend() {
		// What a cross-site form or a no-cors fetch can carry: a form's content type, text, or none at all.
		for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
				"text/plain")) {
			this.client.post().uri("/queues/endpoint/pause").header("Content-Type", type).body("a=b").exchange()
				.expectStatus().isEqualTo(415);
		}
		this.client.post().uri("/queues/endpoint/pause").exchange().expectStatus().isEqualTo(415);
		// A browser that says the page is of another site is refused whatever it sends.
		this.client.post().uri("/queues/endpoint/pause").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.header("Sec-Fetch-Site", "cross-site").exchange().expectStatus().isForbidden();
		assertThat(this.engine.admin().pausedQueues()).doesNotContain("endpoint");
		// Reads are not touched.
		get("").expectStatus().isOk();
	}

	@Test
	void pausesAndResumesAQueueNamingWhoAsked() {
		Map<String, Object> paused = post("/queues/endpoint/pause", "ops-lead").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(paused).containsEntry("paused", true).containsEntry("changed", true);
		assertThat(this.jdbc.queryForObject("SELECT paused_by FROM " + SCHEMA.name()
				+ ".pgqueue_queue_pauses WHERE queue = 'endpoint'", String.class)).isEqualTo("ops-lead");
		try {
			UUID id = this.jobs.enqueue(JobRequest.of("endpoint.work", "while paused").queue("endpoint"));
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Map<String, Object> queue = map(map(get("").expectBody(JSON).returnResult().getResponseBody()
					.get("queues")).get("endpoint"));
				assertThat(queue).containsEntry("paused", true);
				Map<String, Object> health = RestTestClient.bindToServer()
					.baseUrl("http://localhost:" + this.port)
					.build()
					.get()
					.uri("/actuator/health/pgqueue")
					.exchange()
					.expectBody(JSON)
					.returnResult()
					.getResponseBody();
				assertThat(map(map(map(health.get("details")).get("queues")).get("endpoint")))
					.containsEntry("paused", true);
			});
			assertThat(SCHEMA.stateOf(this.jdbc, id)).isEqualTo("available");

			assertThat(post("/queues/endpoint/resume", "ops-lead").expectBody(JSON).returnResult().getResponseBody())
				.containsEntry("paused", false)
				.containsEntry("changed", true);
			await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, id)));
		}
		finally {
			this.jdbc.update("DELETE FROM " + SCHEMA.name() + ".pgqueue_queue_pauses");
		}
	}

	@Test
	void listsPausesRunsAndDeletesASchedule() {
		Map<String, Object> listed = get("/schedules").expectStatus().isOk().expectBody(JSON).returnResult()
			.getResponseBody();
		assertThat(listed.get("schedules").toString()).contains("endpoint-tick");
		Map<String, Object> one = get("/schedules/endpoint-tick").expectStatus().isOk().expectBody(JSON).returnResult()
			.getResponseBody();
		assertThat(one).containsEntry("queue", "endpoint").containsEntry("declared", true)
			.containsEntry("paused", false).containsKey("nextTick");

		assertThat(post("/schedules/endpoint-tick/pause", "ops-lead").expectStatus().isOk().expectBody(JSON)
			.returnResult().getResponseBody()).containsEntry("changed", true).containsEntry("paused", true);
		assertThat(get("/schedules/endpoint-tick").expectBody(JSON).returnResult().getResponseBody())
			.containsEntry("pausedBy", "ops-lead");
		assertThat(post("/schedules/endpoint-tick/resume", "ops-lead").expectBody(JSON).returnResult()
			.getResponseBody()).containsEntry("paused", false);

		Map<String, Object> ran = post("/schedules/endpoint-tick/run-now", "ops-lead").expectStatus().isOk()
			.expectBody(JSON).returnResult().getResponseBody();
		UUID job = UUID.fromString((String) ran.get("job"));
		await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, job)));

		post("/schedules/missing/pause", "ops-lead").expectStatus().isNotFound();
		get("/schedules/missing").expectStatus().isNotFound();
		this.client.delete().uri("/schedules/endpoint-tick").exchange().expectStatus().isOk();
		this.client.delete().uri("/schedules/endpoint-tick").exchange().expectStatus().isNotFound();
	}

	@Test
	void countsThenCancelsAndRetriesEveryJobAFilterMatches() {
		List<UUID> later = new java.util.ArrayList<>();
		for (int i = 0; i < 4; i++) {
			later.add(this.jobs.enqueue(JobRequest.of("endpoint.work", "bulk-" + i)
				.queue("endpoint")
				.tags("bulk-check")
				.delay(Duration.ofHours(1))));
		}
		Map<String, Object> counted = get("/jobs?tag=bulk-check&state=scheduled&count=true&limit=2").expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(list(counted.get("jobs"))).hasSize(2);
		assertThat(counted).containsEntry("matching", 4);

		Map<String, Object> cancelled = this.client.post()
			.uri("/jobs")
			.header("X-User", "ops-bulk")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.body(Map.of("action", "cancel", "tag", "bulk-check"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(cancelled).containsEntry("action", "cancel").containsEntry("changed", 4);
		// Cancelled jobs are finished ones: their rows are in the finished jobs' table now.
		this.jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_finished_jobs SET state = 'failed', last_error = 'Bulk Check' "
				+ "WHERE public_id = ANY(?)", (Object) later.toArray(new UUID[0]));

		Map<String, Object> retried = this.client.post()
			.uri("/jobs")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.body(Map.of("action", "retry", "error", "bulk check", "finishedSince", "2000-01-01T00:00:00Z"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
		assertThat(retried).containsEntry("changed", 4);
		// Retry options, on failed jobs of a queue no poller runs.
		this.jdbc.update("INSERT INTO " + SCHEMA.name() + ".pgqueue_jobs (public_id, kind, queue, payload, state, "
				+ "attempt, max_attempts, finished_at, last_error) SELECT gen_random_uuid(), 'endpoint.unpolled', "
				+ "'unpolled', '{}', 'failed', 1, 1, now(), 'options check' FROM generate_series(1, 4)");
		assertThat(postJobs(Map.of("action", "retry", "error", "options check", "failedFor", "1h")).expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody()).as("jobs that failed just now are not an hour old").containsEntry("changed", 0);
		assertThat(postJobs(Map.of("action", "retry", "error", "options check", "atMost", 3)).expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody()).containsEntry("changed", 3);
		postJobs(Map.of("action", "retry", "kind", "endpoint.unpolled", "failedFor", "soon")).expectStatus()
			.isBadRequest();
		this.client.post()
			.uri("/jobs")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.body(Map.of("action", "retry"))
			.exchange()
			.expectStatus()
			.isBadRequest();
		this.client.post()
			.uri("/jobs")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.body(Map.of("action", "explode", "kind", "endpoint.work"))
			.exchange()
			.expectStatus()
			.isBadRequest();
		assertThat(get("/kinds").expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody())
			.containsEntry("kinds", List.of("endpoint.fail-once", "endpoint.work"));
	}

	private RestTestClient.ResponseSpec postJobs(Map<String, Object> body) {
		return this.client.post()
			.uri("/jobs")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.body(body)
			.exchange();
	}

	@Test
	void answersBadRequestsAndUnknownPaths() {
		get("/jobs?finishedSince=yesterday").expectStatus().isBadRequest();
		get("/jobs?state=lost").expectStatus().isBadRequest();
		get("/jobs?before=abc").expectStatus().isBadRequest();
		get("/jobs/not-a-uuid").expectStatus().isBadRequest();
		get("/queues").expectStatus().isNotFound();
		post("/queues/endpoint/explode", "ops").expectStatus().isNotFound();
	}

	private RestTestClient.ResponseSpec get(String path) {
		return this.client.get().uri(path).exchange();
	}

	private RestTestClient.ResponseSpec getAs(String path, String user, String roles) {
		return this.client.get().uri(path).header("X-User", user).header("X-Roles", roles).exchange();
	}

	private RestTestClient.ResponseSpec post(String path, String user) {
		// As the docs tell operators: a write carries a JSON content type, a body or not.
		return this.client.post()
			.uri(path)
			.header("X-User", user)
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.exchange();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object value) {
		return (Map<String, Object>) value;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> list(Object value) {
		return (List<Map<String, Object>>) value;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(EndpointListener.class)
	static class EndpointApplication {

		/**
		 * Authenticates a request as the user of its {@code X-User} header, in the roles of its
		 * {@code X-Roles} header, as a security filter would: in the thread's security context and as
		 * the request's principal.
		 */
		@Bean
		Filter authenticatesTheUserOfTheHeader() {
			return (request, response, chain) -> {
				HttpServletRequest http = (HttpServletRequest) request;
				String user = http.getHeader("X-User");
				if (user != null) {
					String roles = (http.getHeader("X-Roles") != null) ? http.getHeader("X-Roles") : "OPS";
					TestingAuthenticationToken authentication = new TestingAuthenticationToken(user, "n/a",
							List.of(roles.split(",")).stream().map((role) -> "ROLE_" + role).toArray(String[]::new));
					SecurityContextHolder.getContext().setAuthentication(authentication);
					request = new HttpServletRequestWrapper(http) {

						@Override
						public Principal getUserPrincipal() {
							return authentication;
						}

						@Override
						public boolean isUserInRole(String role) {
							return List.of(roles.split(",")).contains(role);
						}

					};
				}
				try {
					chain.doFilter(request, response);
				}
				finally {
					SecurityContextHolder.clearContext();
				}
			};
		}

	}

	@Component
	static class EndpointListener {

		private final Set<UUID> failedOnce = ConcurrentHashMap.newKeySet();

		@JobListener(kind = "endpoint.work", queue = "endpoint")
		void work(Job job) {
		}

		@JobListener(kind = "endpoint.fail-once", queue = "endpoint")
		void failOnce(Job job) {
			if (this.failedOnce.add(job.id())) {
				throw new IllegalStateException("first run fails");
			}
		}

	}

}
