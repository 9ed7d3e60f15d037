package dev.pgqueue.userprojects;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's quick start, steps 1 to 5 exactly as printed, as a project of a user's own: built
 * through the BOM, its own test run by its own build on a machine with only a JDK (no
 * {@code PGQUEUE_TEST_JDBC_URL}: the test kit's embedded PostgreSQL), then started from its jar
 * against a database of its own, where it runs a job another application enqueues, stays up without a
 * web server, and stops on {@code SIGTERM}.
 */
class QuickStartProjectTests {

	@Test
	void theQuickStartAsPrintedBuildsPassesItsTestStartsRunsItsJobAndStopsOnSigterm() throws Exception {
		Map<String, String> files = QuickStart.files(UserProject.ROOT.resolve("README.md"));
		assertThat(files).as("the files the README's quick start prints")
			.containsOnlyKeys("pom.xml", "src/main/resources/db/migration/V1__accounts.sql",
					"src/main/java/com/example/signup/SignupService.java",
					"src/main/java/com/example/signup/Application.java", "src/main/resources/application.yml",
					"src/test/java/com/example/signup/SignupTests.java");
		assertThat(files.get("pom.xml")).as("the README's BOM version is this build's")
			.contains("<version>" + UserProject.VERSION + "</version>");

		UserProject project = UserProject.create("quick-start");
		files.forEach((path, content) -> project.write(path,
				path.equals("pom.xml") ? QuickStart.pom(content) : content));
		Map<String, String> onlyAJdk = new HashMap<>();
		onlyAJdk.put("PGQUEUE_TEST_JDBC_URL", null);
		onlyAJdk.put("PGQUEUE_TEST_USERNAME", null);
		onlyAJdk.put("PGQUEUE_TEST_PASSWORD", null);
		String build = project.maven(onlyAJdk, "package");
		assertThat(project.testsRun()).as("SignupTests ran in the project's own build").isEqualTo(1);
		String postgres = System.getProperty("pgqueue.postgres.version").replaceFirst("\\.0$", "");
		assertThat(build).as("the test kit's embedded PostgreSQL is the one the docs name, through the BOM")
			.contains("(PostgreSQL " + postgres + ")");

		try (UserDatabase database = UserDatabase.create("quick_start");
				UserApplication application = UserApplication.start(project.bootJar(), database.springEnvironment())) {
			application.awaitLog("Started Application in", Duration.ofMinutes(2));
			UUID id = database.producer()
				.enqueue(JobRequest.of("email.welcome", Map.of("address", "ada@example.com", "name", "Ada"))
					.queue("mail"));
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
				assertThat(application.isAlive()).as("the application is up; its log:%n%s", application.output()).isTrue();
				assertThat(database.stateOf(id)).isEqualTo("completed");
			});
			assertThat(database.jdbc().queryForObject("SELECT count(*) FROM accounts", Integer.class))
				.as("the application's own migration ran").isZero();

			// A worker without a web server stays up: alive at every look for 3 s.
			await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(application::isAlive);
			application.signal("TERM");
			int status = application.awaitExit(Duration.ofSeconds(60));
			assertThat(status).as("SIGTERM ends the JVM through Spring Boot's shutdown hook").isIn(0, 143);
			assertThat(application.output()).contains("Queue 'mail' stopped");
		}
	}

}
