package dev.pgqueue.testkit;

import java.util.List;
import java.util.stream.Collectors;

import dev.pgqueue.JobOutcome;

/**
 * What a {@link QueueTester#drain drain} ran on the test thread, in the order the outcomes were
 * recorded. Its {@code toString()} lists every run, so that an assertion on it shows them:
 * {@code assertThat(runs.failed()).as("%s", runs).isZero()}.
 *
 * @param runs each attempt that ran, with its outcome
 */
public record JobRuns(List<JobRun> runs) {

	public JobRuns {
		runs = List.copyOf(runs);
	}

	/** How many jobs completed. */
	public int completed() {
		return count(JobOutcome.COMPLETED);
	}

	/** How many attempts failed and left their job to be tried again later. */
	public int retried() {
		return count(JobOutcome.RETRIED);
	}

	/** How many jobs failed for good. */
	public int failed() {
		return count(JobOutcome.FAILED);
	}

	/** The runs of jobs of this kind. */
	public List<JobRun> ofKind(String kind) {
		return this.runs.stream().filter((run) -> run.kind().equals(kind)).toList();
	}

	/** Whether nothing ran. */
	public boolean isEmpty() {
		return this.runs.isEmpty();
	}

	private int count(JobOutcome outcome) {
		return (int) this.runs.stream().filter((run) -> run.outcome() == outcome).count();
	}

	@Override
	public String toString() {
		if (this.runs.isEmpty()) {
			return "no job ran";
		}
		return this.runs.size() + " ran (" + completed() + " completed, " + retried() + " retried, " + failed()
				+ " failed):" + this.runs.stream().map((run) -> "\n  - " + run).collect(Collectors.joining());
	}

}
