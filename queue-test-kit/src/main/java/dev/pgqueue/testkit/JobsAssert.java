package dev.pgqueue.testkit;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import dev.pgqueue.JobState;
import org.assertj.core.api.AbstractAssert;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Assertions on the jobs in the table, AssertJ style, from {@link QueueTester#assertThatJobs()}:
 * narrow the jobs down with filters, then assert on those that are left. The table is read once,
 * when the assertion is made; a failure lists every job read, each with the first filter it did not
 * pass, so that the difference shows.
 *
 * <pre>{@code
 * queue.assertThatJobs().ofKind("email.welcome").inQueue("mail")
 *     .withPayload(new WelcomeEmail("ada@example.com", "Ada"))
 *     .hasSize(1);
 * queue.assertThatJobs().ofKind("report.monthly").isEmpty();
 * queue.assertThatJobs().ofKind("email.welcome").allCompleted();
 * }</pre>
 */
public final class JobsAssert extends AbstractAssert<JobsAssert, List<EnqueuedJob>> {

	/** Most jobs a failure message lists. */
	private static final int MOST_LISTED = 50;

	private final List<EnqueuedJob> all;

	private final List<Filter> filters;

	private final JsonMapper jsonMapper;

	private final String schema;

	JobsAssert(List<EnqueuedJob> all, List<Filter> filters, JsonMapper jsonMapper, String schema) {
		super(passing(all, filters), JobsAssert.class);
		this.all = all;
		this.filters = filters;
		this.jsonMapper = jsonMapper;
		this.schema = schema;
	}

	/** Only the jobs of this kind. */
	public JobsAssert ofKind(String kind) {
		return filtered(Filter.of("of kind '" + kind + "'", (job) -> job.kind().equals(kind)));
	}

	/** Only the jobs in this queue. */
	public JobsAssert inQueue(String queue) {
		return filtered(Filter.of("in queue '" + queue + "'", (job) -> job.queue().equals(queue)));
	}

	/** Only the jobs in this state. */
	public JobsAssert inState(JobState state) {
		return filtered(Filter.of(state.sqlValue(), (job) -> job.state() == state));
	}

	/** Only the jobs of this priority. */
	public JobsAssert withPriority(int priority) {
		return filtered(Filter.of("with priority " + priority, (job) -> job.priority() == priority));
	}

	/** Only the jobs enqueued with this unique key. */
	public JobsAssert withUniqueKey(String uniqueKey) {
		return filtered(Filter.of("with unique key '" + uniqueKey + "'", (job) -> uniqueKey.equals(job.uniqueKey())));
	}

	/** Only the jobs that fall (or fell) due after this instant: delayed, or scheduled for later. */
	public JobsAssert dueAfter(Instant instant) {
		return filtered(Filter.of("due after " + instant, (job) -> job.runAt().isAfter(instant)));
	}

	/**
	 * Only the jobs whose payload, read as the expected object's class with the application's
	 * {@code JsonMapper} (as a listener taking that type reads it), equals it.
	 */
	public JobsAssert withPayload(Object expected) {
		Class<?> type = expected.getClass();
		return filtered(new Filter("with payload equal to " + expected + " (read as " + type.getName() + ")",
				(job) -> {
					Payload read = read(job, type);
					if (read.failure() != null) {
						return read.failure();
					}
					return Objects.equals(read.value(), expected) ? null : "its payload reads as " + read.value();
				}));
	}

	/**
	 * Only the jobs whose payload, read as {@code type} with the application's {@code JsonMapper},
	 * matches the condition.
	 */
	public <T> JobsAssert withPayload(Class<T> type, Predicate<? super T> condition) {
		return filtered(new Filter("with a payload read as " + type.getName() + " that matches the condition", (job) -> {
			Payload read = read(job, type);
			if (read.failure() != null) {
				return read.failure();
			}
			return condition.test(type.cast(read.value())) ? null : "its payload reads as " + read.value();
		}));
	}

	/** Only the jobs that match the condition, described in failure messages by {@code description}. */
	public JobsAssert matching(String description, Predicate<? super EnqueuedJob> condition) {
		return filtered(Filter.of(description, condition));
	}

	/** Verifies that at least one job passes the filters: it was enqueued. */
	public JobsAssert isNotEmpty() {
		if (this.actual.isEmpty()) {
			failWith("Expected a job " + filtersText() + ", but there is none." + listing(this.all, true));
		}
		return this;
	}

	/** Verifies that no job passes the filters: none was enqueued. */
	public JobsAssert isEmpty() {
		if (!this.actual.isEmpty()) {
			failWith("Expected no job " + filtersText() + ", but found " + this.actual.size() + ":"
					+ listing(this.actual, false));
		}
		return this;
	}

	/** Verifies that exactly {@code expected} jobs pass the filters. */
	public JobsAssert hasSize(int expected) {
		if (this.actual.size() != expected) {
			failWith("Expected " + expected + ((expected == 1) ? " job " : " jobs ") + filtersText() + ", but found "
					+ this.actual.size() + "." + listing(this.all, true));
		}
		return this;
	}

	/** Verifies that some jobs pass the filters and all of them completed. */
	public JobsAssert allCompleted() {
		return allInState(JobState.COMPLETED);
	}

	/** Verifies that some jobs pass the filters and all of them failed for good. */
	public JobsAssert allFailed() {
		return allInState(JobState.FAILED);
	}

	/** Verifies that some jobs pass the filters and all of them are in this state. */
	public JobsAssert allInState(JobState state) {
		String expected = "every job " + filtersText() + " to be " + state.sqlValue();
		if (this.actual.isEmpty()) {
			String deleted = (state == JobState.COMPLETED)
					? " (jobs deleted as they complete, with pgqueue.retention.completed=0, are not in the table)" : "";
			failWith("Expected " + expected + ", but there is no such job" + deleted + "." + listing(this.all, true));
		}
		List<EnqueuedJob> others = this.actual.stream().filter((job) -> job.state() != state).toList();
		if (!others.isEmpty()) {
			failWith("Expected " + expected + ", but " + others.size() + " of " + this.actual.size() + " are not:"
					+ listing(others, false));
		}
		return this;
	}

	/** Verifies that exactly one job passes the filters, and returns it. */
	public EnqueuedJob singleJob() {
		hasSize(1);
		return this.actual.get(0);
	}

	private JobsAssert filtered(Filter filter) {
		List<Filter> narrower = new ArrayList<>(this.filters);
		narrower.add(filter);
		JobsAssert narrowed = new JobsAssert(this.all, narrower, this.jsonMapper, this.schema);
		// A description given with as(…) carries over to the narrowed assertion.
		return (this.info.description() != null) ? narrowed.as(this.info.description()) : narrowed;
	}

	private void failWith(String message) {
		// Through a format argument: payloads may hold '%'.
		failWithMessage("%s", message);
	}

	private String filtersText() {
		return this.filters.isEmpty() ? "in the table" : this.filters.stream()
			.map(Filter::description)
			.collect(Collectors.joining(" "));
	}

	/** The jobs, one a line; with {@code why}, each job that did not pass says which filter stopped it. */
	private String listing(List<EnqueuedJob> jobs, boolean why) {
		StringBuilder text = new StringBuilder("\nJobs in pgqueue schema '").append(this.schema)
			.append("'")
			.append(why ? "" : " that did")
			.append(" (")
			.append(jobs.size())
			.append(jobs.size() >= JobRows.MOST ? " or more" : "")
			.append("):");
		if (jobs.isEmpty()) {
			text.append(" none");
		}
		jobs.stream().limit(MOST_LISTED).forEach((job) -> {
			text.append("\n  - ").append(job.describe());
			String mismatch = why ? mismatch(job, this.filters) : null;
			if (mismatch != null) {
				text.append("\n      not matched: ").append(mismatch);
			}
		});
		if (jobs.size() > MOST_LISTED) {
			text.append("\n  … and ").append(jobs.size() - MOST_LISTED).append(" more");
		}
		return text.toString();
	}

	private Payload read(EnqueuedJob job, Class<?> type) {
		try {
			return new Payload(this.jsonMapper.readValue(job.payload(), type), null);
		}
		catch (JacksonException ex) {
			return new Payload(null, "its payload does not read as " + type.getName() + ": "
					+ EnqueuedJob.firstLine(ex.getOriginalMessage()));
		}
	}

	private static List<EnqueuedJob> passing(List<EnqueuedJob> jobs, List<Filter> filters) {
		return jobs.stream().filter((job) -> mismatch(job, filters) == null).toList();
	}

	/** Why the job does not pass the filters (the first it fails), or {@code null} when it passes them all. */
	private static @Nullable String mismatch(EnqueuedJob job, List<Filter> filters) {
		for (Filter filter : filters) {
			String mismatch = filter.mismatch().apply(job);
			if (mismatch != null) {
				return mismatch;
			}
		}
		return null;
	}

	/**
	 * One filter: what it keeps, and why a job does not pass it ({@code null} when it does).
	 */
	record Filter(String description, Function<EnqueuedJob, @Nullable String> mismatch) {

		static Filter of(String description, Predicate<? super EnqueuedJob> condition) {
			return new Filter(description, (job) -> condition.test(job) ? null : "not " + description);
		}

	}

	private record Payload(@Nullable Object value, @Nullable String failure) {
	}

}
