package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Recurring jobs on a real table: what a pass fires and skips, ticks turned back on the database's
 * side, several instances firing one schedule at once, and the run-time API.
 */
class SchedulesTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private static final CountDownLatch overlapGate = new CountDownLatch(1);

	private static QueueFixture fixture;

	private static QueueEngine engine;

	private static JdbcJobSchedules schedules;

	private static ScheduleTicker ticker;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("schedules");
		fixture.metrics(new MicrometerQueueMetrics(registry, List.of()));
		fixture.handle("report.nightly", "reports", (job) -> {
		});
		fixture.handle("slow.tick", "slow", (job) -> overlapGate.await(WAIT.toSeconds(), TimeUnit.SECONDS));
		fixture.configure(QueueSettings.defaults("reports").withPollInterval(Duration.ofMillis(50)));
		fixture.configure(QueueSettings.defaults("slow").withPollInterval(Duration.ofMillis(50)));
		// A grace of two seconds: a tick older than that when a pass finds it is missed.
		engine = fixture.engineBuilder()
			.schedules(new ScheduleSettings(List.of(), Duration.ofSeconds(1), Duration.ofSeconds(2)))
			.build();
		schedules = EngineInternals.of(engine).schedules();
		ticker = EngineInternals.of(engine).scheduleTicker();
	}

	@AfterAll
	static void tearDown() {
		overlapGate.countDown();
		fixture.close();
	}

	@BeforeEach
	void clean() {
		fixture.jdbc().update("DELETE FROM " + table());
		fixture.deleteAllJobs();
		fixture.jdbc().update("DELETE FROM " + fixture.schema().name() + ".pgqueue_unique_periods");
	}

	@Test
	void aSavedScheduleStartsAtItsFirstTickAfterNowAndResolvesTheListenersQueue() {
		ScheduleDetails saved = schedules.save(Schedule.of("nightly", "0 0 2 * * *", "report.nightly")
			.zone("Europe/Paris")
			.payload(Map.of("format", "pdf")));

		assertThat(saved.queue()).isEqualTo("reports");
		assertThat(saved.payload()).contains("\"format\": \"pdf\"");
		assertThat(saved.nextTick()).isAfter(Instant.now().minusSeconds(5));
		assertThat(saved.nextTick().atZone(ZoneId.of("Europe/Paris")).getHour()).isEqualTo(2);
		assertThat(saved.declared()).isFalse();
		assertThat(ticker.pass().fired()).as("nothing due yet").isZero();
	}

	@Test
	void aDueTickEnqueuesOneJobWhoseRunAtIsTheTick() {
		schedules.save(Schedule.of("due", "0 0 * * * *", "report.nightly").payload(Map.of("n", 1)));
		Instant tick = turnBack("due", Duration.ofSeconds(10));

		assertThat(ticker.pass().fired()).isEqualTo(1);
		assertThat(ticker.pass().fired()).as("the same tick again").isZero();

		List<Map<String, Object>> jobs = jobsOf("report.nightly");
		assertThat(jobs).hasSize(1);
		assertThat(runAt(jobs.get(0))).isEqualTo(tick);
		assertThat(jobs.get(0).get("state")).isEqualTo("available");
		assertThat(jobs.get(0).get("queue")).isEqualTo("reports");
		ScheduleDetails after = schedules.get("due").orElseThrow();
		assertThat(after.lastTick()).isEqualTo(tick);
		assertThat(after.lastJob()).isEqualTo(jobs.get(0).get("public_id"));
		assertThat(after.nextTick()).isEqualTo(tick.plusSeconds(3600));
		assertThat(registry.get("pgqueue.schedule.ticks").tag("schedule", "due").counter().count()).isEqualTo(1);
	}

	@Test
	void theJobOfATickRunsWithTheTickAsItsRunAt() {
		List<Instant> seen = new ArrayList<>();
		fixture.handle("tick.seen", "seen", (job) -> {
			synchronized (seen) {
				seen.add(job.runAt());
			}
		});
		fixture.configure(QueueSettings.defaults("seen").withPollInterval(Duration.ofMillis(50)));
		schedules.save(Schedule.of("seen", "0 */5 * * * *", "tick.seen"));
		// The newest tick at or before now: the only one due, whatever the time within the five minutes.
		Instant tick = turnBackTicks("seen", 0);
		ticker.pass();
		JobPoller poller = fixture.poller("seen");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> {
				synchronized (seen) {
					return !seen.isEmpty();
				}
			});
		}
		finally {
			poller.stop();
		}
		assertThat(seen).containsExactly(tick);
	}

	@Test
	void latestRunsTheNewestMissedTickOnce() {
		schedules.save(Schedule.of("latest", "0 0 * * * *", "report.nightly").missed(MissedTicks.LATEST));
		Instant first = turnBackTicks("latest", 3);

		assertThat(ticker.pass().fired()).isEqualTo(1);

		assertThat(jobsOf("report.nightly")).extracting(SchedulesTests::runAt)
			.containsExactly(first.plus(Duration.ofHours(3)));
		assertThat(registry.get("pgqueue.schedule.ticks.skipped").tag("schedule", "latest").tag("reason", "missed")
			.counter().count()).isEqualTo(3);
	}

	@Test
	void allRunsEveryMissedTickInOrder() {
		schedules.save(Schedule.of("all", "0 0 * * * *", "report.nightly").missed(MissedTicks.ALL));
		Instant first = turnBackTicks("all", 3);

		assertThat(ticker.pass().fired()).isEqualTo(4);

		assertThat(jobsOf("report.nightly")).extracting(SchedulesTests::runAt).containsExactly(first,
				first.plus(Duration.ofHours(1)), first.plus(Duration.ofHours(2)), first.plus(Duration.ofHours(3)));
	}

	@Test
	void allCatchesUpBeyondOnePassesBound() {
		schedules.save(Schedule.of("catch-up", "0 * * * * *", "report.nightly").missed(MissedTicks.ALL));
		turnBackTicks("catch-up", ScheduleTicker.TICKS_PER_PASS + 49);

		ScheduleTicker.Pass first = ticker.pass();
		assertThat(first.fired()).isEqualTo(ScheduleTicker.TICKS_PER_PASS);
		assertThat(first.more()).isTrue();
		assertThat(ticker.pass().fired()).isEqualTo(50);
		assertThat(jobsOf("report.nightly")).hasSize(ScheduleTicker.TICKS_PER_PASS + 50);
	}

	@Test
	void noneSkipsMissedTicks() {
		schedules.save(Schedule.of("none", "0 0 * * * *", "report.nightly").missed(MissedTicks.NONE));
		turnBackTicks("none", 3);

		assertThat(ticker.pass().fired()).isZero();
		assertThat(jobsOf("report.nightly")).isEmpty();
		assertThat(schedules.get("none").orElseThrow().nextTick()).isAfter(Instant.now().minusSeconds(5));
	}

	@Test
	void overlapSkipSkipsATickWhileThePreviousTicksJobIsUnfinished() {
		schedules.save(Schedule.of("overlap", "* * * * * *", "slow.tick").overlap(Overlap.SKIP));
		turnBack("overlap", Duration.ofSeconds(1));
		assertThat(ticker.pass().fired()).isEqualTo(1);
		UUID firstJob = schedules.get("overlap").orElseThrow().lastJob();

		awaitNextTickDue("overlap");
		assertThat(ticker.pass().fired()).as("the first tick's job still waits").isZero();
		assertThat(registry.get("pgqueue.schedule.ticks.skipped").tag("schedule", "overlap").tag("reason", "overlap")
			.counter().count()).isGreaterThanOrEqualTo(1);

		fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'completed' WHERE public_id = ?", firstJob);
		awaitNextTickDue("overlap");
		assertThat(ticker.pass().fired()).isEqualTo(1);
		assertThat(jobsOf("slow.tick")).hasSize(2);
	}

	@Test
	void aPausedScheduleFiresNothingUntilResumed() {
		schedules.save(Schedule.of("paused", "0 0 * * * *", "report.nightly"));
		assertThat(schedules.pause("paused")).isTrue();
		assertThat(schedules.pause("paused")).isFalse();
		turnBack("paused", Duration.ofSeconds(5));

		assertThat(ticker.pass().fired()).isZero();
		ScheduleDetails paused = schedules.get("paused").orElseThrow();
		assertThat(paused.paused()).isTrue();
		assertThat(paused.pausedBy()).isEqualTo("system");

		assertThat(schedules.resume("paused")).isTrue();
		assertThat(ticker.pass().fired()).isEqualTo(1);
	}

	@Test
	void runNowEnqueuesAJobOutsideTheTicks() {
		ScheduleDetails saved = schedules.save(Schedule.of("manual", "0 0 2 * * *", "report.nightly"));

		UUID job = schedules.runNow("manual");

		assertThat(fixture.row(job).get("state")).isEqualTo("available");
		assertThat(schedules.get("manual").orElseThrow().lastJob()).isEqualTo(job);
		assertThat(schedules.get("manual").orElseThrow().nextTick()).isEqualTo(saved.nextTick());
		assertThatIllegalArgumentException().isThrownBy(() -> schedules.runNow("missing"))
			.withMessageContaining("'missing'");
	}

	@Test
	void changingTheCronMovesTheNextTickChangingThePayloadDoesNot() {
		ScheduleDetails first = schedules.save(Schedule.of("changed", "0 0 2 * * *", "report.nightly"));
		ScheduleDetails samePlan = schedules.save(Schedule.of("changed", "0 0 2 * * *", "report.nightly")
			.payload(Map.of("v", 2)));
		ScheduleDetails newPlan = schedules.save(Schedule.of("changed", "0 0 3 * * *", "report.nightly"));

		assertThat(samePlan.nextTick()).isEqualTo(first.nextTick());
		assertThat(samePlan.payload()).contains("\"v\": 2");
		assertThat(newPlan.nextTick().atZone(ZoneId.of("UTC")).getHour()).isEqualTo(3);
		assertThat(newPlan.zone().getId()).as("the default zone, by its name").isEqualTo("UTC");
		assertThat(schedules.list()).extracting(ScheduleDetails::name).containsExactly("changed");
		assertThat(schedules.delete("changed")).isTrue();
		assertThat(schedules.get("changed")).isEmpty();
	}

	@Test
	void badDefinitionsNameTheScheduleAndTheFix() {
		assertThatIllegalArgumentException().isThrownBy(() -> Schedule.of("nightly", "0 0 25 * * *", "report.nightly"))
			.withMessageContaining("Schedule 'nightly' has an invalid cron expression \"0 0 25 * * *\"")
			.withMessageContaining("six fields");
		assertThatIllegalArgumentException().isThrownBy(() -> Schedule.of("nightly", "0 0 2 * *", "report.nightly"))
			.withMessageContaining("Schedule 'nightly'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Schedule.of("nightly", "0 0 2 * * *", "report.nightly").zone("Europe/Pari"))
			.withMessageContaining("Schedule 'nightly' has an unknown time zone 'Europe/Pari'");
		assertThatIllegalArgumentException().isThrownBy(() -> Schedule.of("night ly", "0 0 2 * * *", "report.nightly"))
			.withMessageContaining("Schedule name 'night ly' is not valid");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> schedules.save(Schedule.of("never", "0 0 0 30 2 *", "report.nightly")))
			.withMessageContaining("Schedule 'never' never fires");
	}

	@Test
	void declaredSchedulesAreSavedAtStartAndMarkedAsDeclared() {
		QueueEngine declaring = fixture.engineBuilder()
			.processing(false)
			.schedules(ScheduleSettings.DEFAULT.withDeclared(List.of(Schedule.of("declared", "@daily", "report.nightly"))))
			.build();
		declaring.start();
		try {
			ScheduleDetails declared = schedules.get("declared").orElseThrow();
			assertThat(declared.declared()).isTrue();
			assertThat(declared.cron()).isEqualTo("@daily");
		}
		finally {
			declaring.close();
		}
	}

	@Test
	void instancesFiringAtOnceFireEachTickOnce() throws Exception {
		// A schedule every second, turned back a minute with every missed tick to run: four instances'
		// tickers pass over it at once, again and again, for three seconds.
		schedules.save(Schedule.of("every-second", "* * * * * *", "report.nightly").missed(MissedTicks.ALL));
		turnBack("every-second", Duration.ofSeconds(60));
		List<QueueEngine> instances = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			instances.add(fixture.engine());
		}
		long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		List<CompletableFuture<Integer>> passes = new ArrayList<>();
		for (QueueEngine instance : instances) {
			passes.add(CompletableFuture.supplyAsync(() -> {
				int fired = 0;
				while (System.nanoTime() < end) {
					fired += EngineInternals.of(instance).scheduleTicker().pass().fired();
				}
				return fired;
			}));
		}
		int fired = 0;
		for (CompletableFuture<Integer> pass : passes) {
			fired += pass.get(60, TimeUnit.SECONDS);
		}
		instances.forEach(QueueEngine::close);

		List<Instant> ticks = jobsOf("report.nightly").stream().map(SchedulesTests::runAt).toList();
		assertThat(ticks).as("one job per tick").doesNotHaveDuplicates();
		assertThat(ticks).hasSize(fired).hasSizeGreaterThanOrEqualTo(61);
		Instant first = ticks.get(0);
		for (int i = 0; i < ticks.size(); i++) {
			assertThat(ticks.get(i)).as("no tick left out").isEqualTo(first.plusSeconds(i));
		}
	}

	@Test
	void aTickFiredTwiceFindsItsKeyTaken() {
		schedules.save(Schedule.of("guarded", "0 0 * * * *", "report.nightly"));
		Instant tick = turnBack("guarded", Duration.ofSeconds(10));
		assertThat(ticker.pass().fired()).isEqualTo(1);
		// As if the schedule's move had been lost: the same tick is due again.
		fixture.jdbc().update("UPDATE " + table() + " SET next_tick = ? WHERE name = 'guarded'",
				java.sql.Timestamp.from(tick));

		ticker.pass();

		assertThat(jobsOf("report.nightly")).hasSize(1);
	}

	@Test
	void aScheduleWhoseExpressionCannotBeReadDoesNotStopTheOthers() {
		schedules.save(Schedule.of("unreadable", "0 0 * * * *", "report.nightly"));
		schedules.save(Schedule.of("readable", "0 0 * * * *", "report.nightly"));
		turnBack("unreadable", Duration.ofSeconds(5));
		turnBack("readable", Duration.ofSeconds(5));
		fixture.jdbc().update("UPDATE " + table() + " SET cron = 'every hour' WHERE name = 'unreadable'");

		assertThat(ticker.pass().fired()).isEqualTo(1);
		assertThat(schedules.get("readable").orElseThrow().lastTick()).isNotNull();
		assertThat(schedules.get("unreadable").orElseThrow().lastTick()).isNull();
	}

	@Test
	void overdueSchedulesAreThoseWhoseTickIsLaterThanTheGrace() {
		schedules.save(Schedule.of("overdue", "* * * * * *", "report.nightly"));
		schedules.save(Schedule.of("on-time", "* * * * * *", "report.nightly"));
		turnBack("overdue", Duration.ofMinutes(5));
		turnBack("on-time", Duration.ofSeconds(5));

		assertThat(schedules.overdue(Duration.ofMinutes(1))).containsExactly("overdue");
	}

	/**
	 * Moves a schedule's next tick to its tick {@code ago} before the database's clock (the tick at or
	 * before that instant), as if the instances had been down since; returns that tick.
	 */
	private static Instant turnBack(String name, Duration ago) {
		ScheduleDetails schedule = schedules.get(name).orElseThrow();
		Instant now = fixture.jdbc().queryForObject("SELECT now()", OffsetDateTime.class).toInstant();
		dev.pgqueue.engine.schedules.CronTicks ticks = new dev.pgqueue.engine.schedules.CronTicks(
				org.springframework.scheduling.support.CronExpression.parse(schedule.cron()), schedule.zone());
		Instant target = now.minus(ago);
		Instant tick = ticks.next(target.minus(Duration.ofDays(1)));
		Instant following = ticks.next(tick);
		while (following != null && !following.isAfter(target)) {
			tick = following;
			following = ticks.next(tick);
		}
		fixture.jdbc().update("UPDATE " + table() + " SET next_tick = ? WHERE name = ?", java.sql.Timestamp.from(tick),
				name);
		return tick;
	}

	/**
	 * Moves a schedule's next tick {@code back} ticks before its newest tick at or before the
	 * database's clock, as if the instances had been down since; returns that tick.
	 */
	private static Instant turnBackTicks(String name, int back) {
		ScheduleDetails schedule = schedules.get(name).orElseThrow();
		Instant now = fixture.jdbc().queryForObject("SELECT now()", OffsetDateTime.class).toInstant();
		dev.pgqueue.engine.schedules.CronTicks ticks = new dev.pgqueue.engine.schedules.CronTicks(
				org.springframework.scheduling.support.CronExpression.parse(schedule.cron()), schedule.zone());
		List<Instant> due = new ArrayList<>();
		Instant tick = ticks.next(now.minus(Duration.ofDays(2)));
		while (tick != null && !tick.isAfter(now)) {
			due.add(tick);
			tick = ticks.next(tick);
		}
		Instant target = due.get(due.size() - 1 - back);
		fixture.jdbc().update("UPDATE " + table() + " SET next_tick = ? WHERE name = ?", java.sql.Timestamp.from(target),
				name);
		return target;
	}

	/** Waits until the database's clock reaches the schedule's next tick. */
	private static void awaitNextTickDue(String name) {
		Instant next = schedules.get(name).orElseThrow().nextTick();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> !fixture.jdbc()
			.queryForObject("SELECT now()", OffsetDateTime.class).toInstant().isBefore(next));
	}

	private static List<Map<String, Object>> jobsOf(String kind) {
		return fixture.jdbc().queryForList("SELECT * FROM " + fixture.allJobs() + " WHERE kind = ? ORDER BY run_at", kind);
	}

	private static Instant runAt(Map<String, Object> row) {
		Object value = row.get("run_at");
		return (value instanceof OffsetDateTime odt) ? odt.toInstant() : ((java.sql.Timestamp) value).toInstant();
	}

	private static String table() {
		return fixture.schema().name() + ".pgqueue_schedules";
	}

}
