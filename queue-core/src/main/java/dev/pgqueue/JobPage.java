package dev.pgqueue;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One page of {@link JobAdmin#list}: jobs newest first, and the cursor of the next page.
 *
 * @param jobs the jobs, newest first
 * @param next the cursor to pass as {@link JobQuery#before(String)} for older jobs, or {@code null}
 * when this page was the last
 */
public record JobPage(List<JobDetails> jobs, @Nullable String next) {

	public JobPage {
		jobs = List.copyOf(jobs);
	}

}
