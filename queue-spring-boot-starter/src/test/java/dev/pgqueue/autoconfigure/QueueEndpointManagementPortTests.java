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
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code pgqueue} endpoint's writes guarded when Actuator is served by a management server of its
 * own ({@code management.server.port}), whose filters are not the application's: a write a cross-site
 * form or a page of another site could send is refused there too, and the JSON write an operator sends
 * is taken.
 */
@SpringBootTest(classes = QueueEndpointManagementPortTests.ManagementPortApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.server.port=0", "management.endpoints.web.exposure.include=pgqueue",
				"management.endpoint.pgqueue.access=unrestricted", "pgqueue.enabled=false",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
class QueueEndpointManagementPortTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_endpoint_port");

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

	@LocalManagementPort
	private int managementPort;

	@Autowired
	private JobAdmin admin;

	private RestTestClient client;

	@BeforeEach
	void createClient() {
		assertThat(this.managementPort).as("the management server's own port").isPositive().isNotEqualTo(this.port);
		this.client = RestTestClient.bindToServer()
			.baseUrl("http://localhost:" + this.managementPort + "/actuator/pgqueue")
			.build();
	}

	@Test
	void refusesCrossSiteWritesOnTheManagementServerAndTakesAnOperatorsJsonWrite() {
		for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
				"text/plain")) {
			this.client.post().uri("/queues/ports/pause").header("Content-Type", type).body("a=b").exchange()
				.expectStatus().isEqualTo(415);
		}
		this.client.post().uri("/queues/ports/pause").exchange().expectStatus().isEqualTo(415);
		this.client.post().uri("/queues/ports/pause").contentType(MediaType.APPLICATION_JSON)
			.header("Sec-Fetch-Site", "cross-site").exchange().expectStatus().isForbidden();
		assertThat(this.admin.pausedQueues()).doesNotContain("ports");

		this.client.post().uri("/queues/ports/pause").contentType(MediaType.APPLICATION_JSON).exchange()
			.expectStatus().isOk();
		assertThat(this.admin.pausedQueues()).contains("ports");
		this.client.post().uri("/queues/ports/resume").contentType(MediaType.APPLICATION_JSON).exchange()
			.expectStatus().isOk();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ManagementPortApplication {

	}

}
