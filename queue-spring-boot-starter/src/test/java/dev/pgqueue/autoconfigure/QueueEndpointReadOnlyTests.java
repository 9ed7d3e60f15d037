package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code pgqueue} endpoint exposed without a word about its access or values: it reads, refuses
 * every write, says why where it reads the queues, and masks payloads and outputs.
 */
@SpringBootTest(classes = QueueEndpointTests.EndpointApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=pgqueue", "pgqueue.shutdown-timeout=5s",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
class QueueEndpointReadOnlyTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_endpoint_ro");

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
	private JdbcTemplate jdbc;

	@Autowired
	private JobClient jobs;

	@Test
	void masksPayloadsAndOutputsByDefault() {
		UUID id = this.jobs.enqueue(JobRequest.of("endpoint.work", Map.of("secret", "s3cr3t")).queue("endpoint"));
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(SCHEMA.stateOf(this.jdbc, id)));
		this.jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_finished_jobs SET output = '{\"receipt\": 1}' WHERE public_id = ?",
				id);
		RestTestClient client = RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + this.port + "/actuator/pgqueue")
			.build();
		Map<String, Object> job = client.get().uri("/jobs/" + id + "?payload=true&output=true").exchange()
			.expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody();
		assertThat(job).containsEntry("payload", "******").containsEntry("output", "******")
			.containsEntry("state", "completed");
		assertThat(client.get().uri("/jobs/" + id).exchange().expectBody(JSON).returnResult().getResponseBody())
			.doesNotContainKeys("payload", "output");
	}

	@Test
	void readsButRefusesToPauseAQueueByDefault() {
		RestTestClient client = RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + this.port + "/actuator/pgqueue")
			.build();
		Map<String, Object> body = client.get().uri("").exchange().expectStatus().isOk().expectBody(JSON)
			.returnResult().getResponseBody();
		assertThat(body).extractingByKey("writes").asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("enabled", false)
			.hasEntrySatisfying("reason", (reason) -> assertThat((String) reason).contains("answer 404")
				.contains("management.endpoint.pgqueue.access=unrestricted"));
		client.get().uri("/jobs").exchange().expectStatus().isOk();

		// Boot does not map the writes of a read-only endpoint: 404, as the queues' answer says.
		client.post().uri("/queues/endpoint/pause").exchange().expectStatus().isNotFound();
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM " + SCHEMA.name() + ".pgqueue_queue_pauses",
				Long.class)).isZero();
	}

}
