package dev.pgqueue.reliability;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 4: PostgreSQL restarts (fast shutdown: every session is cut and every open transaction
 * rolled back) while a transactional queue and a leased queue are being drained, each by two
 * worker processes. Nobody restarts the workers: their pools reconnect, their pollers back off and
 * resume, and both queues finish.
 *
 * <p>The restart cuts every connection to the server, other test runs' included; scenario 23 stops
 * the server and scenario 24 restarts it too, once each, and the module's tests run one at a time.
 */
class PostgresRestartTests {

	private static final int JOBS = 12_000;

	@Test
	void workersReconnectByThemselvesAfterPostgresRestartsAndFinishEveryJob() throws Exception {
		PostgresRestart restart = PostgresRestart.resolve();
		try (Workload transactional = Workload.create("restart_transactional");
				Workload leased = Workload.create("restart_leased");
				WorkerFleet transactionalFleet = new WorkerFleet("restart_transactional", transactional,
						Scenarios.options(QueueMode.TRANSACTIONAL, Map.of("work-ms", "5")));
				WorkerFleet leasedFleet = new WorkerFleet("restart_leased", leased,
						Scenarios.options(QueueMode.LEASED, Map.of("work-ms", "5")))) {
			transactional.enqueue(JOBS);
			leased.enqueue(JOBS);
			long start = System.nanoTime();
			List<Worker> workers = new ArrayList<>(transactionalFleet.startReady("t", 2));
			workers.addAll(leasedFleet.startReady("l", 2));
			await().atMost(Duration.ofMinutes(1))
				.until(() -> transactional.completed() >= JOBS / 10 && leased.completed() >= JOBS / 10);
			// Restart early, so that most of the work is left when the server is back: a queue that
			// drained during the restart would prove nothing about reconnecting.

			Path log = Paths.get("target", "reliability", "restart.log");
			Files.createDirectories(log.getParent());
			Duration restarting = restart.run(log);
			long restarted = System.nanoTime();
			await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> {
				try (Connection connection = TestDatabase.get().connect()) {
					return connection.isValid(5);
				}
			});
			// The test's own pool may still hand out a connection the restart cut (a fast restart
			// falls inside the pool's validation window): read until a connection works.
			long[] completedAfterRestart = await().atMost(Duration.ofMinutes(1))
				.ignoreExceptions()
				.until(() -> new long[] { transactional.completed(), leased.completed() }, (read) -> true);
			await().atMost(Duration.ofMinutes(1))
				.pollInterval(Duration.ofMillis(100))
				.ignoreExceptions()
				.until(() -> transactional.completed() > completedAfterRestart[0]
						&& leased.completed() > completedAfterRestart[1]);
			Duration resumed = Duration.ofNanos(System.nanoTime() - restarted);
			transactional.awaitDrained(Duration.ofMinutes(3));
			leased.awaitDrained(Duration.ofMinutes(3));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			assertThat(workers).as("no worker died or was restarted").allMatch(Worker::isAlive);
			String details = "restart (" + restart + ") took " + Figures.seconds(restarting)
					+ ", both queues completing jobs again " + Figures.seconds(resumed) + " after it";
			Workload.Tally transactionalTally = transactional.tally(transactionalFleet.log());
			Figures.print("4. PostgreSQL restarted, transactional", transactionalTally, took, details);
			Workload.Tally leasedTally = leased.tally(leasedFleet.log());
			Figures.print("4. PostgreSQL restarted, leased", leasedTally, took, details);
			Guarantees.assertHeld(QueueMode.TRANSACTIONAL, transactionalTally, JOBS);
			Guarantees.assertHeld(QueueMode.LEASED, leasedTally, JOBS);
			assertThat(workers).as("every worker lost its LISTEN connection to the restart and listened again")
				.allSatisfy((worker) -> assertThat(worker.lines("listening again on channel")).isNotEmpty());
		}
	}

}
