package dev.pgqueue.userprojects;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample application's jar, as the README's first command builds it, started without its web
 * server ({@code --spring.main.web-application-type=none}): it stays up and runs its jobs until
 * signalled.
 */
class SampleWithoutWebServerTests {

	@Test
	void theSampleJarWithoutItsWebServerKeepsRunningJobsUntilSignalled() throws Exception {
		Path jar = UserProject.ROOT.resolve("queue-sample-app/target/queue-sample-app.jar");
		assertThat(Files.isRegularFile(jar)).as("%s, which the reactor builds before this module", jar).isTrue();
		try (UserDatabase database = UserDatabase.create("sample_worker");
				UserApplication sample = UserApplication.start(jar, database.springEnvironment(),
						"--spring.main.web-application-type=none")) {
			sample.awaitLog("Started SampleApplication in", Duration.ofMinutes(2));
			assertThat(sample.output()).doesNotContain("Tomcat started");
			for (int round = 1; round <= 3; round++) {
				// Up without its web server: alive at every look for 5 s, then it runs a job.
				await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7)).until(sample::isAlive);
				String email = "ada" + round + "@example.com";
				Long account = database.jdbc().queryForObject(
						"INSERT INTO accounts (email, name) VALUES (?, 'Ada') RETURNING id", Long.class, email);
				UUID id = database.producer()
					.enqueue(JobRequest.of("email.welcome", Map.of("accountId", account, "email", email,
							"name", "Ada")).queue("mail"));
				await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
					assertThat(sample.isAlive()).as("the sample is up; its log:%n%s", sample.output()).isTrue();
					assertThat(database.stateOf(id)).isEqualTo("completed");
				});
			}
			assertThat(database.jdbc().queryForObject("SELECT count(*) FROM sent_emails", Integer.class)).isEqualTo(3);
			sample.signal("TERM");
			assertThat(sample.awaitExit(Duration.ofSeconds(60))).isIn(0, 143);
			assertThat(sample.output()).contains("Queue 'mail' stopped");
		}
	}

}
