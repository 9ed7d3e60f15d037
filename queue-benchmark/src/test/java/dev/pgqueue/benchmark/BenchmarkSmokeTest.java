package dev.pgqueue.benchmark;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the smoke profile against the test database so that the harness never rots: every workload
 * must produce figures for both pgqueue and its baseline, and every output file must be written.
 * The figures themselves are not judged here; see docs/benchmarks.md.
 */
@Tag("machine") // needs a program of the machine: run with -Pmachine (see the parent pom)
class BenchmarkSmokeTest {

	@Test
	void smokeProfileMeasuresEveryWorkloadOnBothSides() throws Exception {
		TestDatabase database = TestDatabase.get();
		Benchmark.Options options = new Benchmark.Options(Profile.smoke(), database.jdbcUrl(), database.username(),
				database.password(), List.of(), Path.of("target", "benchmark-smoke"), true, null);
		ByteArrayOutputStream printed = new ByteArrayOutputStream();
		Report report;
		try (PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
			report = Benchmark.run(options, out);
		}
		System.out.print(printed.toString(StandardCharsets.UTF_8));

		assertThat(report.failures()).isEmpty();
		for (Workload workload : Benchmark.WORKLOADS) {
			List<Result> results = report.of(workload.name());
			assertThat(results).as(workload.name()).isNotEmpty();
			assertThat(results).as(workload.name() + " figures").allSatisfy((result) -> {
				assertThat(result.pgqueue()).as(result.variant() + " " + result.metric() + ", pgqueue").isPositive();
				assertThat(result.baseline()).as(result.variant() + " " + result.metric() + ", baseline").isPositive();
			});
		}
		assertThat(report.directory().resolve("results.json")).isNotEmptyFile();
		assertThat(report.directory().resolve("results.csv")).isNotEmptyFile();
		assertThat(report.directory().resolve("table.md")).isNotEmptyFile();
		assertThat(report.directory().resolve("ratios.png")).isNotEmptyFile();
		assertThat(report.directory().resolve("drain.png")).isNotEmptyFile();
		assertThat(report.directory().resolve("latency.png")).isNotEmptyFile();
		assertThat(printed.toString(StandardCharsets.UTF_8)).contains("| Workload");
	}

}
