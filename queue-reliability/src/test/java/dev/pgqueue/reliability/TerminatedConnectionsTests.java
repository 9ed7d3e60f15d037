package dev.pgqueue.reliability;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.QueueMode;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 3: every database connection of every worker is terminated with
 * {@code pg_terminate_backend}, five times while they work (a failover, an administrator, a
 * connection-killing proxy). The workers' pools reconnect; batches whose connection died roll back.
 */
class TerminatedConnectionsTests {

	private static final int JOBS = 8_000;

	private static final int ROUNDS = 5;

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void connectionsTerminatedWhileWorkersPollLoseNoJob(QueueMode mode) throws Exception {
		String scenario = "terminate_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode))) {
			workload.enqueue(JOBS);
			long start = System.nanoTime();
			List<Worker> workers = fleet.startReady("w", 3);
			List<Integer> terminated = new ArrayList<>();
			for (int round = 1; round <= ROUNDS; round++) {
				long progress = (long) JOBS * round / (ROUNDS + 2);
				await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= progress);
				// The pools reconnect on demand: wait until every worker is connected again, or a
				// round right after the last one would find only the connections reopened so far.
				await().atMost(Duration.ofMinutes(1))
					.until(() -> workerBackends(workload, false) >= workers.size());
				terminated.add(workerBackends(workload, true));
			}
			workload.awaitDrained(Duration.ofMinutes(3));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			assertThat(workers).as("the workers outlived their connections").allMatch(Worker::isAlive);
			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("3. pg_terminate_backend x" + ROUNDS + ", " + Scenarios.name(mode), tally, took,
					"backends terminated per round " + terminated);
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(terminated).as("each round found the workers' connections").allSatisfy((n) -> assertThat(n)
				.isGreaterThanOrEqualTo(workers.size()));
		}
	}

	/**
	 * Counts the backends the scenario's workers hold and, when {@code terminate}, terminates them;
	 * returns how many there were (or were terminated).
	 */
	private static int workerBackends(Workload workload, boolean terminate) throws SQLException {
		String count = terminate ? "count(*) FILTER (WHERE pg_terminate_backend(pid))" : "count(*)";
		try (Connection admin = TestDatabase.get().connect();
				PreparedStatement statement = admin.prepareStatement("SELECT " + count
						+ " FROM pg_stat_activity WHERE application_name LIKE ? AND pid <> pg_backend_pid()")) {
			statement.setString(1, WorkerProcess.applicationName(workload.schemaName(), "%"));
			try (ResultSet rs = statement.executeQuery()) {
				rs.next();
				return rs.getInt(1);
			}
		}
	}

}
