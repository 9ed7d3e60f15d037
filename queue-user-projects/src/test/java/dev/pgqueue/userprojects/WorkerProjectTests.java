package dev.pgqueue.userprojects;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker application of a user's own (src/test/projects/worker: the starter, a pool and two
 * listeners, one queue in each mode), built through the BOM and started from its jar as its own
 * process: without a web server it keeps processing for a minute, then stops on a signal with its
 * running jobs finished (within pgqueue.shutdown-timeout) or back in their queue (past it), none lost;
 * with a web server it stops the same way on SIGINT.
 */
class WorkerProjectTests {

	private static final Duration START = Duration.ofMinutes(2);

	@Test
	void aWorkerWithoutAWebServerKeepsProcessingForAMinuteThenStopsOnSigtermFinishingOrReleasingItsJobs()
			throws Exception {
		UserProject project = UserProject.copyOf("worker");
		project.maven(Map.of(), "package");
		try (UserDatabase database = UserDatabase.create("worker");
				UserApplication worker = UserApplication.start(project.bootJar(), database.springEnvironment())) {
			worker.awaitLog("Started WorkerApplication in", START);
			assertThat(worker.output()).as("no web server in this application").doesNotContain("Tomcat started");
			JobClient client = database.producer();
			List<UUID> steady = new ArrayList<>();
			long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (System.nanoTime() < until) {
				for (String mode : List.of("transactional", "leased")) {
					for (int i = 0; i < 2; i++) {
						steady.add(client.enqueue(JobRequest.of("work." + mode, Map.of("millis", 100)).queue(mode)));
					}
				}
				// Up at every look until the next round of enqueues.
				await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
					.untilAsserted(() -> assertThat(worker.isAlive())
						.as("the worker is up after %d jobs; its log:%n%s", steady.size(),
								UserProject.tail(worker.output(), 40))
						.isTrue());
			}
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(steady)
				.allSatisfy((id) -> assertThat(database.stateOf(id)).as("job %s", id).isEqualTo("completed")));

			// Two jobs that finish within the shutdown timeout (5 s), two that do not.
			List<UUID> finishing = List.of(
					client.enqueue(JobRequest.of("work.transactional", Map.of("millis", 2_000)).queue("transactional")),
					client.enqueue(JobRequest.of("work.transactional", Map.of("millis", 2_000)).queue("transactional")));
			List<UUID> tooLong = List.of(
					client.enqueue(JobRequest.of("work.leased", Map.of("millis", 120_000)).queue("leased")),
					client.enqueue(JobRequest.of("work.leased", Map.of("millis", 120_000)).queue("leased")));
			for (UUID id : concat(finishing, tooLong)) {
				worker.awaitLog("Job " + id + " started", Duration.ofSeconds(30));
			}
			worker.signal("TERM");
			assertThat(worker.awaitExit(Duration.ofSeconds(60))).as("the exit status on SIGTERM").isIn(0, 143);

			assertThat(finishing).allSatisfy((id) -> assertThat(database.stateOf(id)).isEqualTo("completed"));
			assertThat(tooLong).allSatisfy((id) -> {
				assertThat(database.stateOf(id)).as("a job cut short by the stop is back in its queue").isEqualTo("available");
				assertThat(worker.output()).as("its interrupted listener is not reported as a failed attempt")
					.doesNotContain("Job " + id + " of kind 'work.leased' in queue 'leased' failed");
				assertThat(database.jdbc().queryForObject("SELECT attempt FROM pgqueue_all_jobs WHERE public_id = ?",
						Integer.class, id)).as("without using an attempt").isZero();
			});
			assertThat(database.jdbc().queryForObject("SELECT count(*) FROM pgqueue_all_jobs", Integer.class))
				.as("no job lost").isEqualTo(steady.size() + finishing.size() + tooLong.size());
			assertThat(worker.output()).contains("Queue 'transactional' stopped; every running job finished")
				.contains("Queue 'leased': shutdown timeout (PT5S) passed; returned 2 unfinished jobs to the queue "
						+ "without using an attempt");
		}
	}

	@Test
	void aWorkerWithAWebServerRunsItsJobsAndStopsOnSigint() throws Exception {
		UserProject project = UserProject.copyOf("worker");
		project.maven(Map.of(), "package", "-Pweb");
		try (UserDatabase database = UserDatabase.create("web_worker");
				UserApplication worker = UserApplication.start(project.bootJar(), database.springEnvironment(),
						"--server.port=0")) {
			worker.awaitLog("Started WorkerApplication in", START);
			assertThat(worker.output()).contains("Tomcat started");
			JobClient client = database.producer();
			List<UUID> jobs = new ArrayList<>();
			for (String mode : List.of("transactional", "leased")) {
				for (int i = 0; i < 5; i++) {
					jobs.add(client.enqueue(JobRequest.of("work." + mode, Map.of("millis", 50)).queue(mode)));
				}
			}
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(jobs)
				.allSatisfy((id) -> assertThat(database.stateOf(id)).isEqualTo("completed")));
			worker.signal("INT");
			assertThat(worker.awaitExit(Duration.ofSeconds(60))).as("the exit status on SIGINT").isIn(0, 130);
			assertThat(worker.output()).contains("Queue 'transactional' stopped").contains("Queue 'leased' stopped");
		}
	}

	private static List<UUID> concat(List<UUID> first, List<UUID> second) {
		List<UUID> all = new ArrayList<>(first);
		all.addAll(second);
		return all;
	}

}
