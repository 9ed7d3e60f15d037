package dev.pgqueue.autoconfigure;

import java.util.List;

import dev.pgqueue.JobAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.BodyInserters;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code pgqueue} endpoint's writes guarded in a WebFlux application on Reactor Netty, as in a
 * servlet one: form, text and missing content types answer 415, a cross-site browser 403, an
 * operator's JSON write is taken.
 */
@SpringBootTest(classes = QueueEndpointWebFluxTests.WebFluxApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "management.endpoints.web.exposure.include=pgqueue",
				"management.endpoint.pgqueue.access=unrestricted", "pgqueue.enabled=false",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
class QueueEndpointWebFluxTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_endpoint_flux");

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
	private JobAdmin admin;

	@Autowired
	private ApplicationContext context;

	private WebTestClient client;

	@BeforeEach
	void createClient() {
		assertThat(this.context.getClass().getSimpleName()).as("a reactive application").contains("Reactive");
		this.client = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.port + "/actuator/pgqueue").build();
	}

	@Test
	void refusesCrossSiteWritesAndTakesAnOperatorsJsonWrite() {
		for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
				"text/plain")) {
			this.client.post().uri("/queues/flux/pause").header("Content-Type", type)
				.body(BodyInserters.fromValue("a=b")).exchange().expectStatus().isEqualTo(415);
		}
		this.client.post().uri("/queues/flux/pause").exchange().expectStatus().isEqualTo(415);
		this.client.post().uri("/queues/flux/pause").contentType(MediaType.APPLICATION_JSON)
			.header("Sec-Fetch-Site", "cross-site").exchange().expectStatus().isForbidden();
		assertThat(this.admin.pausedQueues()).doesNotContain("flux");

		this.client.post().uri("/queues/flux/pause").contentType(MediaType.APPLICATION_JSON).exchange()
			.expectStatus().isOk();
		assertThat(this.admin.pausedQueues()).contains("flux");
		// Reads are not touched.
		this.client.get().uri("").exchange().expectStatus().isOk();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class WebFluxApplication {

	}

}
