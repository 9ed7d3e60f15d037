package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 28, a rate limit across three worker processes: 50 starts a second over a backlog. The
 * checks are in SQL, on the start instants the jobs table recorded (the database's clock): no
 * one-second window holds more than 50 starts, and while the backlog lasts the queue starts 45 a
 * second or more. {@code -Dpgqueue.reliability.rate.jobs} sets the backlog (1 500 by default, 30 s
 * a mode; 5 000 for the full proof).
 */
class RateLimitTests {

	private static final int LIMIT = 50;

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void threeWorkersStartNoMoreThanTheLimitInAnyWindowAndKeepItsPace(QueueMode mode) throws Exception {
		int jobs = Integer.getInteger("pgqueue.reliability.rate.jobs", 1_500);
		String scenario = "rate_limit_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload,
						Scenarios.options(mode, Map.of("rate-starts", String.valueOf(LIMIT), "work-ms", "5")))) {
			workload.enqueue(jobs);
			long start = System.nanoTime();
			fleet.startReady("w", 3);
			workload.awaitDrained(Duration.ofSeconds(jobs / LIMIT + 60));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			String table = workload.table();
			int most = workload.jdbc().queryForObject("""
					SELECT max((SELECT count(*) FROM %1$s b
					            WHERE b.started_at >= a.started_at AND b.started_at < a.started_at + interval '1 second'))
					FROM %1$s a""".formatted(table), Integer.class);
			double span = workload.jdbc().queryForObject(
					"SELECT extract(epoch FROM max(started_at) - min(started_at)) FROM " + table, Double.class);
			double pace = (jobs - LIMIT) / span;
			long workers = workload.jdbc().queryForObject("SELECT count(DISTINCT worker_pid) FROM ledger", Long.class);
			Figures.print("28. rate limit " + LIMIT + " a second, " + jobs + " jobs, three workers, " + Scenarios.name(mode),
					tally, took, String.format(java.util.Locale.ROOT, "most starts in any one-second window %d; %.1f "
							+ "starts a second after the first window's %d; workers that ran jobs %d", most, pace, LIMIT,
							workers));
			Guarantees.assertHeld(mode, tally, jobs);
			assertThat(most).as("most starts in any one-second window").isLessThanOrEqualTo(LIMIT);
			assertThat(pace).as("starts a second while the backlog lasted").isGreaterThanOrEqualTo(45);
			assertThat(workers).as("workers that ran jobs").isEqualTo(3);
		}
	}

}
