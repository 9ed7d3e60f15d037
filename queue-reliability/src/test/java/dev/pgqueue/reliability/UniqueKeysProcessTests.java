package dev.pgqueue.reliability;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 25: unique keys raced across processes. Three {@link UniqueEnqueuerProcess} JVMs of eight
 * threads each enqueue the same 1 000 keys ten times each, all starting at one instant: four threads
 * of each process one call per key, four in batches of 50 through {@code enqueueAll}, each thread in
 * an order of its own. Nobody runs the jobs (they are an hour ahead, in a queue nobody polls), so
 * every key stays held from its first enqueue to the end. Afterwards exactly 1 000 jobs of the kind
 * must exist, one per key, and every one of the 240 000 calls must have returned the id of the job
 * that holds its key.
 */
class UniqueKeysProcessTests {

	private static final int PROCESSES = 3;

	private static final int THREADS = 8;

	private static final int KEYS = 1_000;

	private static final int ROUNDS = 10;

	private static final int BATCH = 50;

	@Test
	void threeProcessesEnqueueingTheSameKeysAtOnceGetOneJobPerKeyAndEveryCallerItsId() throws Exception {
		Path startFile = Paths.get("target", "reliability", "unique_race", "start");
		Files.deleteIfExists(startFile);
		try (Workload workload = Workload.create("unique_race");
				WorkerFleet fleet = new WorkerFleet("unique_race", workload,
						Map.of("threads", Integer.toString(THREADS), "keys", Integer.toString(KEYS), "rounds",
								Integer.toString(ROUNDS), "batch", Integer.toString(BATCH), "start-file",
								startFile.toAbsolutePath().toString()))) {
			workload.jdbc().execute(UniqueEnqueuerProcess.RESULTS_DDL);
			workload.jdbc().execute(UniqueEnqueuerProcess.ERRORS_DDL);
			List<Worker> processes = new ArrayList<>();
			for (int p = 1; p <= PROCESSES; p++) {
				processes.add(fleet.start("p" + p, UniqueEnqueuerProcess.class, Map.of()));
			}
			processes.forEach(Worker::awaitReady);
			// Every process polls for this file and starts at the instant it holds.
			Path written = startFile.resolveSibling("start.tmp");
			long startAt = System.currentTimeMillis() + 500;
			Files.writeString(written, Long.toString(startAt), StandardCharsets.UTF_8);
			Files.move(written, startFile, StandardCopyOption.ATOMIC_MOVE);
			long start = System.nanoTime();
			for (Worker process : processes) {
				assertThat(process.awaitExit(Duration.ofMinutes(3))).as("exit status of %s", process).isZero();
			}
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			List<Long> starts = processes.stream()
				.map((process) -> process.lines(UniqueEnqueuerProcess.STARTED).get(0))
				.map((line) -> Long.parseLong(line.substring(line.indexOf(UniqueEnqueuerProcess.STARTED)
						+ UniqueEnqueuerProcess.STARTED.length()).strip()))
				.toList();
			String jobs = workload.table();
			Map<String, Object> counts = workload.jdbc().queryForMap("""
					SELECT count(*) AS jobs, count(DISTINCT unique_key) AS keys,
					       count(*) FILTER (WHERE state <> 'scheduled') AS not_scheduled
					FROM %s WHERE kind = ?""".formatted(jobs), UniqueEnqueuerProcess.KIND);
			Map<String, Object> results = workload.jdbc().queryForMap("""
					WITH per_caller AS (
					    SELECT process, thread, key, sum(calls) AS calls FROM unique_results GROUP BY process, thread, key),
					per_key AS (
					    SELECT key, count(DISTINCT id) AS ids FROM unique_results GROUP BY key)
					SELECT (SELECT coalesce(sum(calls), 0) FROM unique_results) AS calls,
					       (SELECT count(*) FROM per_caller WHERE calls = ?) AS complete_callers,
					       (SELECT count(*) FROM per_key) AS keys,
					       (SELECT count(*) FROM per_key WHERE ids > 1) AS keys_with_several_ids,
					       (SELECT count(*) FROM unique_results r WHERE NOT EXISTS (
					           SELECT 1 FROM %s j
					           WHERE j.public_id = r.id AND j.kind = ? AND j.unique_key = r.key)) AS ids_of_no_holder,
					       (SELECT count(*) FROM unique_errors) AS errors""".formatted(jobs),
					ROUNDS, UniqueEnqueuerProcess.KIND);
			List<String> errors = workload.jdbc()
				.queryForList("SELECT DISTINCT error FROM unique_errors ORDER BY 1 LIMIT 5", String.class);
			List<String> winners = workload.jdbc().queryForList("""
					SELECT process || ' ' || count(*) FROM (
					    SELECT split_part(payload ->> 'by', '/', 1) AS process FROM %s WHERE kind = ?) AS won
					GROUP BY process ORDER BY process""".formatted(jobs), String.class, UniqueEnqueuerProcess.KIND);
			long calls = number(results, "calls");
			Figures.print("25. unique keys: " + PROCESSES + " processes x " + THREADS + " threads, " + KEYS + " keys x "
					+ ROUNDS + " each, at once", String.format(Locale.ROOT,
							"jobs=%d calls=%d keys-with-several-ids=%d ids-of-no-holder=%d errors=%d duration=%s | "
									+ "starts within %d ms; keys won per process %s; %.0f calls/s in all; %s",
							number(counts, "jobs"), calls, number(results, "keys_with_several_ids"),
							number(results, "ids_of_no_holder"), number(results, "errors"), Figures.seconds(took),
							starts.stream().mapToLong(Long::longValue).max().orElseThrow()
									- starts.stream().mapToLong(Long::longValue).min().orElseThrow(),
							winners, calls / (took.toMillis() / 1000.0),
							processes.stream().map((process) -> process.lines(UniqueEnqueuerProcess.SUMMARY).get(0)).toList()));

			SoftAssertions softly = new SoftAssertions();
			softly.assertThat(errors).as("calls that failed").isEmpty();
			softly.assertThat(number(counts, "jobs")).as("jobs of the kind").isEqualTo(KEYS);
			softly.assertThat(number(counts, "keys")).as("keys those jobs hold").isEqualTo(KEYS);
			softly.assertThat(number(counts, "not_scheduled")).as("jobs no longer waiting (their key freed)").isZero();
			softly.assertThat(calls).as("calls that returned an id").isEqualTo((long) PROCESSES * THREADS * KEYS * ROUNDS);
			softly.assertThat(number(results, "complete_callers")).as("(process, thread, key) with all their calls")
				.isEqualTo((long) PROCESSES * THREADS * KEYS);
			softly.assertThat(number(results, "keys")).as("keys called").isEqualTo(KEYS);
			softly.assertThat(number(results, "keys_with_several_ids")).as("keys whose callers got different ids").isZero();
			softly.assertThat(number(results, "ids_of_no_holder")).as("ids returned that are not the key's job").isZero();
			softly.assertAll();
		}
	}

	private static long number(Map<String, Object> row, String column) {
		return ((Number) row.get(column)).longValue();
	}

}
