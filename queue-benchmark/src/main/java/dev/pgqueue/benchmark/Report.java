package dev.pgqueue.benchmark;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything one run produced.
 *
 * @param profile the sizes used
 * @param startedAt when the run started
 * @param took how long it took
 * @param environment machine, JDK and server
 * @param results every figure, in the order measured
 * @param failures workloads that failed, with their error
 * @param directory where the files were written
 */
public record Report(Profile profile, Instant startedAt, Duration took, Map<String, Object> environment,
		List<Result> results, Map<String, String> failures, Path directory) {

	/** Results of one workload. */
	public List<Result> of(String workload) {
		return this.results.stream().filter((result) -> result.workload().equals(workload)).toList();
	}

}
