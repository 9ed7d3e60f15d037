package dev.pgqueue.sample;

import dev.pgqueue.embedded.EmbeddedPostgresServer;
import org.testcontainers.postgresql.PostgreSQLContainer;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;

/**
 * Runs the sample against a PostgreSQL in a Docker container (run this class's {@code main} from
 * the IDE). The container's connection details replace {@code spring.datasource.*}.
 */
public class TestSampleApplication {

	public static void main(String[] args) {
		String[] withContainer = new String[args.length + 1];
		System.arraycopy(args, 0, withContainer, 0, args.length);
		// Tell the sample not to look for a database of its own: the container provides it.
		withContainer[args.length] = "--sample.database=provided";
		SpringApplication.from(SampleApplication::main).with(ContainersConfig.class).run(withContainer);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ContainersConfig {

		@Bean
		@ServiceConnection
		PostgreSQLContainer postgres() {
			// The build's one PostgreSQL major (postgres.server.version of the parent pom).
			return new PostgreSQLContainer("postgres:" + EmbeddedPostgresServer.packedMajor() + "-alpine");
		}

	}

}
