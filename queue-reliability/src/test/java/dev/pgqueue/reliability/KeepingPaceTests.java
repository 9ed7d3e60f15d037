package dev.pgqueue.reliability;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import dev.pgqueue.QueueMode;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenarios 22 and 23: the pace under connections that keep dying. A producer offers 600 jobs a
 * second to one worker process. In 22, a separate process terminates every backend of the worker
 * twice a second for a minute (as the public cross-queue benchmark's chaos cell does); in 23,
 * PostgreSQL is stopped for 30 s under two workers, one per mode. The worker must keep completing
 * what is offered while its connections die, and be back at the offered rate within 5 s of the
 * server's return: a sweep that breaks every open batch at once is one failure, not one per batch,
 * and a lost connection is claimed again at once on a fresh one.
 */
class KeepingPaceTests {

	private static final int RATE = 600;

	private static final Duration WINDOW = Duration.ofSeconds(5);

	private static final double PACE = 0.95;

	/**
	 * Transactional: eight batches of at most ten jobs at once; leased: 32 jobs at once. Each job
	 * works 1 ms before it writes its ledger row.
	 */
	private static Map<String, String> options(QueueMode mode) {
		return Scenarios.options(mode, Map.of("concurrency", (mode == QueueMode.TRANSACTIONAL) ? "8" : "32",
				"batch-size", "10", "pool-size", "12", "work-ms", "1"));
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void keepsTheOfferedRateWhileEveryBackendIsTerminatedTwiceASecond(QueueMode mode) throws Exception {
		String scenario = "pace_kills_" + Scenarios.name(mode);
		Duration killing = Duration.ofSeconds(60);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, options(mode))) {
			List<Worker> workers = fleet.startReady("w", 1);
			PacedProducer producer = new PacedProducer(workload, RATE).start();
			// The worker is at pace before the kills begin.
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= 2L * RATE);
			Instant killsFrom = workload.databaseNow();
			AtomicInteger sweeps = new AtomicInteger();
			AtomicLong terminated = new AtomicLong();
			ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
			killer.scheduleAtFixedRate(() -> {
				try {
					terminated.addAndGet(terminateWorkerBackends(workload));
					sweeps.incrementAndGet();
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			}, 0, 500, TimeUnit.MILLISECONDS);
			// Two sweeps a second for the length of the kills.
			long rounds = killing.toSeconds() * 2 + 1;
			await().atMost(killing.multipliedBy(2)).pollInterval(Duration.ofMillis(100))
				.until(() -> sweeps.get() >= rounds);
			killer.shutdownNow();
			killer.awaitTermination(10, TimeUnit.SECONDS);
			// Offer on until the worker has caught up with what was offered during the kills.
			long offered = producer.enqueued();
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= offered);
			producer.close();
			workload.awaitDrained(Duration.ofMinutes(2));

			int count = (int) (killing.toMillis() / WINDOW.toMillis());
			List<Workload.Window> windows = workload.windows(killsFrom, WINDOW, count);
			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("22. backends terminated twice a second at " + RATE + " jobs/s, " + Scenarios.name(mode), tally,
					killing, sweeps.get() + " sweeps terminated " + terminated.get() + " backends; completed/offered per "
							+ Figures.seconds(WINDOW) + " window: " + describe(windows));

			assertThat(workers).as("the worker outlived its connections").allMatch(Worker::isAlive);
			Guarantees.assertHeld(mode, tally, producer.enqueued());
			assertThat(sweeps.get()).as("sweeps of the minute").isGreaterThanOrEqualTo(100);
			assertThat(terminated.get() / (double) sweeps.get()).as("backends each sweep found and terminated")
				.isGreaterThanOrEqualTo(1.0);
			assertOffered(windows);
			assertThat(windows.subList(1, windows.size()))
				.as("every %s window after the first completes at least %.0f %% of what was offered in it", WINDOW,
						PACE * 100)
				.allSatisfy((window) -> assertThat(window.pace()).as("window from %s", window.from())
					.isGreaterThanOrEqualTo(PACE));
		}
	}

	@Test
	void backAtTheOfferedRateWithinFiveSecondsOfTheServersReturn() throws Exception {
		PostgresRestart server = PostgresRestart.resolve();
		Duration down = Duration.ofSeconds(30);
		try (Workload transactional = Workload.create("pace_outage_transactional");
				Workload leased = Workload.create("pace_outage_leased");
				WorkerFleet transactionalFleet = new WorkerFleet("pace_outage_transactional", transactional,
						options(QueueMode.TRANSACTIONAL));
				WorkerFleet leasedFleet = new WorkerFleet("pace_outage_leased", leased, options(QueueMode.LEASED))) {
			List<Worker> workers = new ArrayList<>(transactionalFleet.startReady("t", 1));
			workers.addAll(leasedFleet.startReady("l", 1));
			PacedProducer transactionalProducer = new PacedProducer(transactional, RATE).start();
			PacedProducer leasedProducer = new PacedProducer(leased, RATE).start();
			await().atMost(Duration.ofMinutes(1))
				.until(() -> transactional.completed() >= 3L * RATE && leased.completed() >= 3L * RATE);

			Path log = Paths.get("target", "reliability", "outage.log");
			Files.createDirectories(log.getParent());
			server.stopFor(down, log);
			await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> {
				try (Connection connection = TestDatabase.get().connect()) {
					return connection.isValid(5);
				}
			});
			Instant back = transactional.databaseNow();
			// 20 s of offered jobs after the return: the windows measured are those from 5 s to 20 s.
			Instant measuredUntil = back.plusSeconds(20);
			await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200))
				.until(() -> !transactional.databaseNow().isBefore(measuredUntil));
			transactionalProducer.close();
			leasedProducer.close();
			transactional.awaitDrained(Duration.ofMinutes(2));
			leased.awaitDrained(Duration.ofMinutes(2));

			// From 5 s after the server's return, for 15 s.
			List<Workload.Window> transactionalWindows = transactional.windows(back.plus(WINDOW), WINDOW, 3);
			List<Workload.Window> leasedWindows = leased.windows(back.plus(WINDOW), WINDOW, 3);
			String details = "server " + server + " down " + Figures.seconds(down) + "; per second from its return: "
					+ "transactional " + describe(transactional.windows(back, Duration.ofSeconds(1), 8)) + ", leased "
					+ describe(leased.windows(back, Duration.ofSeconds(1), 8));
			Workload.Tally transactionalTally = transactional.tally(transactionalFleet.log());
			Figures.print("23. PostgreSQL down 30 s at " + RATE + " jobs/s, transactional", transactionalTally, down,
					details + "; completed/offered per window from 5 s after its return: "
							+ describe(transactionalWindows));
			Workload.Tally leasedTally = leased.tally(leasedFleet.log());
			Figures.print("23. PostgreSQL down 30 s at " + RATE + " jobs/s, leased", leasedTally, down,
					details + "; completed/offered per window from 5 s after its return: " + describe(leasedWindows));

			assertThat(workers).as("no worker died or was restarted").allMatch(Worker::isAlive);
			// An enqueue cut off at its commit may have committed without the producer knowing: count every
			// job the table holds (each must have completed with its ledger row).
			Guarantees.assertHeld(QueueMode.TRANSACTIONAL, transactionalTally,
					Math.max(transactionalProducer.enqueued(), transactionalTally.jobs()));
			Guarantees.assertHeld(QueueMode.LEASED, leasedTally, Math.max(leasedProducer.enqueued(), leasedTally.jobs()));
			assertThat(transactionalProducer.failedTicks()).as("enqueues that failed while the server was down")
				.isPositive();
			for (List<Workload.Window> windows : List.of(transactionalWindows, leasedWindows)) {
				assertOffered(windows);
				assertThat(windows).as("from 5 s after the server's return, every window completes at least %.0f %% of "
						+ "what was offered in it", PACE * 100)
					.allSatisfy((window) -> assertThat(window.pace()).as("window from %s", window.from())
						.isGreaterThanOrEqualTo(PACE));
			}
		}
	}

	/** The producer kept its rate, or the windows would measure nothing. */
	private static void assertOffered(List<Workload.Window> windows) {
		assertThat(windows).as("jobs offered per %s window", WINDOW)
			.allSatisfy((window) -> assertThat(window.enqueued())
				.isGreaterThanOrEqualTo((long) (0.9 * RATE * WINDOW.toSeconds())));
	}

	private static String describe(List<Workload.Window> windows) {
		return windows.stream()
			.map((window) -> String.format(Locale.ROOT, "%d/%d", window.completed(), window.enqueued()))
			.collect(Collectors.joining(" "));
	}

	/** Terminates every backend of the scenario's workers; returns how many. */
	private static int terminateWorkerBackends(Workload workload) throws SQLException {
		try (Connection admin = TestDatabase.get().connect();
				PreparedStatement statement = admin.prepareStatement("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
						+ "FROM pg_stat_activity WHERE application_name LIKE ? AND pid <> pg_backend_pid()")) {
			statement.setString(1, WorkerProcess.applicationName(workload.schemaName(), "%"));
			try (ResultSet rs = statement.executeQuery()) {
				rs.next();
				return rs.getInt(1);
			}
		}
	}

}
