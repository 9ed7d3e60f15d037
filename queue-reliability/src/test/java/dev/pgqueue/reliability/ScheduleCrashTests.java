package dev.pgqueue.reliability;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.MissedTicks;
import dev.pgqueue.QueueMode;
import dev.pgqueue.Schedule;
import dev.pgqueue.ScheduleDetails;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 24: a recurring job every second ({@code * * * * * *}, {@code missed: all}) declared by
 * three transactional worker processes, each running the schedule ticker, under crashes. The test
 * saves the schedule first (as the workers declare it, so their declarations change nothing) and
 * takes its first tick from that save; at the end it pauses the schedule, lets the queue drain and
 * reads the jobs table: every tick instant from the first to the last fired must have exactly one
 * job, completed with one ledger row, and no other job may exist.
 *
 * <p>The workers' tick passes hold their transaction open for 400 ms before the commit
 * ({@code tick-hold-ms}), printing the ticks they enqueued, so that passes of several workers would
 * overlap if the schedule's row lock did not keep them apart. In the first test the test kills a
 * worker there twice (its ticks, jobs and move of the schedule roll back with the connection; another worker must
 * fire them), replacing it each time, and restarts PostgreSQL once between the kills. In the second,
 * every worker is killed, none runs for 10 s, and three new ones start: the ticks of those seconds
 * must all fire, once each, when they return.
 */
class ScheduleCrashTests {

	private static final String SCHEDULE = "every-second";

	private static final String EVERY_SECOND = "* * * * * *";

	private static final Duration HOLD = Duration.ofMillis(400);

	/** Ticks completed between two faults. */
	private static final Duration PHASE = Duration.ofSeconds(15);

	private static final Duration DOWN = Duration.ofSeconds(10);

	/** What the ticker logs when a tick's unique key was already held: the second guard caught a tick fired twice. */
	private static final String FIRED_ALREADY = "had fired already";

	@Test
	void everyTickFiresOnceThroughTwoKillsInsideATickPassAndAPostgresRestart() throws Exception {
		PostgresRestart restart = PostgresRestart.resolve();
		try (Workload workload = Workload.create("schedule_crash");
				WorkerFleet fleet = new WorkerFleet("schedule_crash", workload, options())) {
			Instant first = workload.schedules().saveDeclared(schedule()).nextTick();
			long start = System.nanoTime();
			List<Worker> running = new ArrayList<>(fleet.startReady("w", 3));
			List<KilledPass> kills = new ArrayList<>();

			awaitTicksCompleted(workload, PHASE);
			kills.add(killInsideATickPass(running));
			running.add(fleet.start("r1"));

			awaitTicksCompleted(workload, PHASE);
			Path log = Paths.get("target", "reliability", "schedule_crash", "restart.log");
			Files.createDirectories(log.getParent());
			Instant restartStarted = workload.databaseNow();
			Duration restarting = restart.run(log);
			// The test's own pool meets the cut connections too: read the clock once it reconnected.
			Instant[] back = new Instant[1];
			await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> (back[0] = workload.databaseNow()) != null);
			Instant restarted = back[0];

			awaitTicksCompleted(workload, PHASE);
			kills.add(killInsideATickPass(running));
			running.add(fleet.start("r2"));

			awaitTicksCompleted(workload, PHASE);
			ScheduleDetails paused = pause(workload);
			workload.awaitDrained(Duration.ofMinutes(1));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Ticks ticks = Ticks.read(workload, first, paused.lastTick());
			Workload.Tally tally = workload.tally(fleet.log());
			List<String> firedAgain = fleet.lines(FIRED_ALREADY);
			List<Instant> duringRestart = ticks.expected()
				.stream()
				.filter((tick) -> tick.isAfter(restartStarted) && !tick.isAfter(restarted))
				.toList();
			StringBuilder details = new StringBuilder(ticks.summary());
			for (int i = 0; i < kills.size(); i++) {
				KilledPass kill = kills.get(i);
				details.append("; kill ").append(i + 1).append(" in ").append(kill.worker()).append("'s pass holding ")
					.append(kill.ticks().size()).append(kill.ticks().size() == 1 ? " tick" : " ticks").append(", fired again ")
					.append(ticks.firedAfter(kill.ticks(), kill.killedAt())).append(" after the kill");
			}
			details.append("; restart (").append(restart).append(") ").append(Figures.seconds(restarting)).append(", ")
				.append(duringRestart.size()).append(" ticks fell in it, fired ")
				.append(duringRestart.isEmpty() ? "-" : Figures.seconds(ticks.maxLateness(duringRestart)))
				.append(" late at most; ").append(firedAgain.size()).append(" tick fires refused by the unique key");
			Figures.print("24. schedule every second: kill -9 x2 inside a tick pass, PostgreSQL restarted", tally, took,
					details.toString());

			ticks.assertEachOnce();
			Guarantees.assertHeld(QueueMode.TRANSACTIONAL, tally, ticks.expected().size());
			for (KilledPass kill : kills) {
				assertThat(kill.ticks()).as("the ticks %s's pass held at the kill", kill.worker())
					.isNotEmpty()
					.allSatisfy((tick) -> assertThat(ticks.expected()).contains(tick));
			}
			assertThat(firedAgain).as("ticks a second pass fired: the row lock alone kept each tick to one pass")
				.isEmpty();
			assertConsistent(paused);
		}
	}

	@Test
	void everyTickMissedWhileEveryWorkerWasDownRunsOnceWhenTheyReturn() throws Exception {
		try (Workload workload = Workload.create("schedule_down");
				WorkerFleet fleet = new WorkerFleet("schedule_down", workload, options())) {
			Instant first = workload.schedules().saveDeclared(schedule()).nextTick();
			long start = System.nanoTime();
			List<Worker> workers = fleet.startReady("w", 3);
			awaitTicksCompleted(workload, Duration.ofSeconds(5));

			for (Worker worker : workers) {
				worker.kill();
			}
			Thread.sleep(DOWN.toMillis());
			// Read once every worker has been gone for long: nothing fires or rolls back any more.
			Instant firstMissed = workload.schedules().get(SCHEDULE).orElseThrow().nextTick();
			Instant returning = workload.databaseNow();
			fleet.startReady("r", 3);
			Instant ready = workload.databaseNow();

			awaitTicksCompleted(workload, Duration.ofSeconds(5));
			ScheduleDetails paused = pause(workload);
			workload.awaitDrained(Duration.ofMinutes(1));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Ticks ticks = Ticks.read(workload, first, paused.lastTick());
			Workload.Tally tally = workload.tally(fleet.log());
			// The returning workers' first pass fires every tick due by then: those are the ticks no
			// worker was there for.
			Instant firstFiredBack = ticks.firstCreatedFrom(returning);
			List<Instant> missed = ticks.expected()
				.stream()
				.filter((tick) -> !tick.isBefore(firstMissed) && !tick.isAfter(firstFiredBack))
				.toList();
			Figures.print("24. schedule every second, missed: all, every worker down " + Figures.seconds(DOWN), tally, took,
					ticks.summary() + "; " + missed.size() + " ticks fell while none ran, all fired "
							+ ticks.firedAfter(missed, returning) + " after the new workers started ("
							+ Figures.seconds(Duration.between(returning, ready)) + " to be ready); "
							+ fleet.lines(FIRED_ALREADY).size() + " tick fires refused by the unique key");

			ticks.assertEachOnce();
			Guarantees.assertHeld(QueueMode.TRANSACTIONAL, tally, ticks.expected().size());
			assertThat(missed).as("ticks that fell while no worker ran").hasSizeGreaterThanOrEqualTo((int) DOWN.toSeconds());
			assertThat(missed).as("each fired by the returning workers, not before the kills")
				.allSatisfy((tick) -> assertThat(ticks.created(tick)).isAfterOrEqualTo(returning));
			assertThat(fleet.lines(FIRED_ALREADY)).as("ticks a second pass fired").isEmpty();
			assertConsistent(paused);
		}
	}

	private static Schedule schedule() {
		return WorkerProcess.schedule(SCHEDULE, EVERY_SECOND, MissedTicks.ALL);
	}

	/**
	 * Transactional workers (two batches of 20, jobs of about 2 ms) declaring the schedule, their
	 * ticker passing every second (the default), each pass that fires holding its transaction open
	 * for {@link #HOLD} before the commit: a pass of another worker that the row lock did not keep out
	 * would overlap it and fire the same ticks. Completed jobs are kept for an hour (the default
	 * retention): the scenario reads them all at the end.
	 */
	private static Map<String, String> options() {
		Map<String, String> options = new LinkedHashMap<>(Scenarios.options(QueueMode.TRANSACTIONAL));
		options.put("schedule", SCHEDULE);
		options.put("schedule-cron", EVERY_SECOND);
		options.put("schedule-missed", "all");
		options.put("tick-hold-ms", Long.toString(HOLD.toMillis()));
		return options;
	}

	/**
	 * Waits until the jobs of the ticks of the next {@code phase} (database clock) have completed:
	 * the schedule fired them and the workers ran them.
	 */
	private static void awaitTicksCompleted(Workload workload, Duration phase) {
		Instant until = workload.databaseNow().plus(phase);
		await().atMost(phase.plus(Duration.ofMinutes(1)))
			.pollInterval(Duration.ofMillis(200))
			.ignoreExceptions()
			.alias("the tick of " + until + " completed")
			.until(() -> {
				Timestamp latest = workload.jdbc()
					.queryForObject("SELECT max(run_at) FROM " + workload.allJobs() + " WHERE state = 'completed'",
							Timestamp.class);
				return latest != null && !latest.toInstant().isBefore(until);
			});
	}

	/**
	 * Waits for the next tick pass any running worker holds open, kills that worker before it commits
	 * and checks from its log that it died inside the pass.
	 */
	private static KilledPass killInsideATickPass(List<Worker> running) throws InterruptedException {
		Map<Worker, Integer> before = new HashMap<>();
		running.forEach((worker) -> before.put(worker, worker.lines(WorkerProcess.TICK_HOLDING).size()));
		Worker[] holder = new Worker[1];
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(5))
			.alias("a worker holding a tick pass open")
			.until(() -> {
				for (Worker worker : running) {
					List<String> trap = worker.lines("tick pass ");
					if (worker.lines(WorkerProcess.TICK_HOLDING).size() > before.get(worker) && !trap.isEmpty()
							&& trap.get(trap.size() - 1).contains(WorkerProcess.TICK_HOLDING)) {
						holder[0] = worker;
						return true;
					}
				}
				return false;
			});
		Worker victim = holder[0];
		Instant killedAt = Instant.now();
		victim.kill();
		running.remove(victim);
		List<String> trap = victim.lines("tick pass ");
		String last = trap.get(trap.size() - 1);
		assertThat(last).as("%s died holding its tick pass open, before the commit", victim).contains(WorkerProcess.TICK_HOLDING);
		String ticks = last.substring(last.indexOf(WorkerProcess.TICK_HOLDING) + WorkerProcess.TICK_HOLDING.length()).strip();
		return new KilledPass(victim.name(), ticks.isEmpty() ? List.of()
				: Arrays.stream(ticks.split(",")).map((millis) -> Instant.ofEpochMilli(Long.parseLong(millis))).toList(),
				killedAt);
	}

	/** Pauses the schedule, so that its last tick is known, and returns it as paused. */
	private static ScheduleDetails pause(Workload workload) {
		assertThat(workload.schedules().pause(SCHEDULE)).isTrue();
		return workload.schedules().get(SCHEDULE).orElseThrow();
	}

	/**
	 * The schedule's row agrees with the jobs: it goes on at the second after its last tick, which
	 * fired shortly before the pause.
	 */
	private static void assertConsistent(ScheduleDetails paused) {
		assertThat(paused.lastTick()).isNotNull();
		assertThat(paused.nextTick()).as("next tick of the paused schedule").isEqualTo(paused.lastTick().plusSeconds(1));
		assertThat(paused.lastTick()).as("last tick fired, against the pause at %s", paused.pausedAt())
			.isAfter(paused.pausedAt().minusSeconds(3));
	}

	/**
	 * A tick pass killed before its commit.
	 * @param ticks the ticks it had enqueued, as it printed them
	 * @param killedAt the test's clock at the kill
	 */
	private record KilledPass(String worker, List<Instant> ticks, Instant killedAt) {

	}

	/**
	 * The schedule's jobs by tick: how many each instant has, and when the first of them was created
	 * (database clock: the pass's transaction start).
	 * @param expected every second from the first tick to the last, computed here
	 */
	private record Ticks(List<Instant> expected, Map<Instant, Long> jobs, Map<Instant, Instant> createdAt) {

		static Ticks read(Workload workload, Instant first, Instant last) {
			List<Instant> expected = new ArrayList<>();
			for (Instant tick = first; !tick.isAfter(last); tick = tick.plusSeconds(1)) {
				expected.add(tick);
			}
			Map<Instant, Long> jobs = new TreeMap<>();
			Map<Instant, Instant> created = new HashMap<>();
			workload.jdbc()
				.query("SELECT run_at, count(*), min(created_at) FROM " + workload.allJobs() + " WHERE kind = ? GROUP BY run_at",
						(ResultSet rs) -> {
							Instant tick = rs.getTimestamp(1).toInstant();
							jobs.put(tick, rs.getLong(2));
							created.put(tick, rs.getTimestamp(3).toInstant());
						}, WorkerProcess.KIND);
			return new Ticks(List.copyOf(expected), jobs, created);
		}

		List<Instant> missing() {
			return this.expected.stream().filter((tick) -> !this.jobs.containsKey(tick)).toList();
		}

		Map<Instant, Long> duplicated() {
			Map<Instant, Long> duplicated = new TreeMap<>();
			this.jobs.forEach((tick, count) -> {
				if (count > 1) {
					duplicated.put(tick, count);
				}
			});
			return duplicated;
		}

		List<Instant> unexpected() {
			return this.jobs.keySet().stream().filter((tick) -> !this.expected.contains(tick)).toList();
		}

		Instant created(Instant tick) {
			return this.createdAt.get(tick);
		}

		/** When the last of these ticks got its job, or {@code null} if none did. */
		Instant latestCreated(List<Instant> ticks) {
			return ticks.stream().map(this.createdAt::get).filter((at) -> at != null).max(Instant::compareTo).orElse(null);
		}

		/** The first moment a job of the schedule was created at or after {@code instant}. */
		Instant firstCreatedFrom(Instant instant) {
			return this.createdAt.values().stream().filter((at) -> !at.isBefore(instant)).min(Instant::compareTo).orElseThrow();
		}

		/** How long after {@code instant} the last of these ticks got its job. */
		String firedAfter(List<Instant> ticks, Instant instant) {
			Instant latest = latestCreated(ticks);
			return (latest != null) ? Figures.seconds(Duration.between(instant, latest)) : "never";
		}

		Duration maxLateness(List<Instant> ticks) {
			return ticks.stream()
				.filter(this.createdAt::containsKey)
				.map((tick) -> Duration.between(tick, this.createdAt.get(tick)))
				.max(Duration::compareTo)
				.orElse(Duration.ZERO);
		}

		String summary() {
			long late = this.expected.stream()
				.filter((tick) -> this.createdAt.containsKey(tick)
						&& Duration.between(tick, this.createdAt.get(tick)).compareTo(Duration.ofMillis(1500)) > 0)
				.count();
			return "ticks " + this.expected.size() + " (" + this.expected.get(0) + " to "
					+ this.expected.get(this.expected.size() - 1) + "): missing " + missing().size() + ", duplicated "
					+ duplicated().size() + ", unexpected " + unexpected().size() + "; " + late
					+ " fired over 1.5 s after their instant, the latest " + Figures.seconds(maxLateness(this.expected));
		}

		void assertEachOnce() {
			SoftAssertions softly = new SoftAssertions();
			softly.assertThat(missing()).as("ticks without a job (gaps)").isEmpty();
			softly.assertThat(duplicated()).as("ticks with more than one job").isEmpty();
			softly.assertThat(unexpected()).as("jobs at no tick of the window").isEmpty();
			softly.assertAll();
		}

	}

}
