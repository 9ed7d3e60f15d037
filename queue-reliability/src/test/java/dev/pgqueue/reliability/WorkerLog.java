package dev.pgqueue.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the workers' logs say about runs that may repeat a job: leases the rescuers found expired,
 * attempts that failed and will be retried, and jobs returned unfinished at shutdown.
 *
 * @param rescued jobs named by a rescuer, once per expired lease
 * @param retried jobs named by a failed attempt that will be retried, once per attempt
 * @param released jobs returned unfinished at shutdown (the engine logs how many, not which)
 */
record WorkerLog(List<UUID> rescued, List<UUID> retried, long released) {

	private static final Pattern RESCUED = Pattern.compile("Job ([0-9a-f-]{36}) of kind '[^']*' in queue '[^']*' "
			+ "was rescued");

	private static final Pattern RETRIED = Pattern.compile("Job ([0-9a-f-]{36}) of kind '[^']*' in queue '[^']*' "
			+ "failed attempt \\d+ of \\d+; retrying");

	private static final Pattern RELEASED = Pattern.compile("returned (\\d+) unfinished jobs to the queue");

	/** Reads the output of every worker. */
	static WorkerLog read(List<Worker> workers) {
		List<UUID> rescued = new ArrayList<>();
		List<UUID> retried = new ArrayList<>();
		long released = 0;
		for (Worker worker : workers) {
			for (String line : worker.output().lines().toList()) {
				Matcher matcher = RESCUED.matcher(line);
				if (matcher.find()) {
					rescued.add(UUID.fromString(matcher.group(1)));
				}
				matcher = RETRIED.matcher(line);
				if (matcher.find()) {
					retried.add(UUID.fromString(matcher.group(1)));
				}
				matcher = RELEASED.matcher(line);
				if (matcher.find()) {
					released += Long.parseLong(matcher.group(1));
				}
			}
		}
		return new WorkerLog(List.copyOf(rescued), List.copyOf(retried), released);
	}

}
