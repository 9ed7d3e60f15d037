package dev.pgqueue.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small application that uses pgqueue as a user would: sign-ups that send a welcome email in a
 * transactional queue, and slow monthly reports in a leased queue.
 *
 * <p>Which PostgreSQL it uses is decided before it starts; see
 * {@link dev.pgqueue.sample.database.SampleDatabaseEnvironmentPostProcessor}.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
