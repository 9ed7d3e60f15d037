package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.autoconfigure.ActionDescriptors.BulkActionDescriptor;
import dev.pgqueue.autoconfigure.AdminAction.Done;
import dev.pgqueue.autoconfigure.AdminAction.Subject;
import dev.pgqueue.autoconfigure.AdminAction.Target;
import dev.pgqueue.autoconfigure.JobDescriptor.AttemptDescriptor;
import dev.pgqueue.autoconfigure.JobDescriptor.ProgressDescriptor;
import dev.pgqueue.autoconfigure.SchedulesDescriptor.ScheduleDescriptor;
import dev.pgqueue.engine.QueueEngine;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.convert.DurationStyle;

/**
 * The {@code pgqueue} Actuator endpoint: the queues with their depth, oldest age, running jobs,
 * whether they are paused and the four signals of a queue that is being outgrown; jobs by queue,
 * kind and state, and one job; and, where the endpoint's access allows writes, retrying, cancelling
 * and deleting jobs and pausing and resuming queues, through {@link JobAdmin}: the actions are
 * {@link AdminAction}'s, which the dashboard shares.
 *
 * <table>
 * <caption>Operations</caption>
 * <tr><td>{@code GET /actuator/pgqueue}</td><td>queues and their signals; with shards, each shard's own jobs</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/jobs?queue=&kind=&state=&tag=&error=&finishedSince=&before=&limit=&count=}</td>
 * <td>jobs, newest first, a page at a time ({@code next} is the next page's {@code before}); with
 * {@code count=true}, how many match in all</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/jobs} {@code {"action": "retry"|"cancel", "kind": …}}</td><td>every
 * failed (retry) or waiting (cancel) job the filters match</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/kinds}</td><td>the kinds pollers handle and schedules enqueue</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/history?hours=&step=}</td><td>each queue's completed, failed and
 * retried attempts, mean and longest wait and run time over the last hours (6 unless given), one point
 * per step of minutes (about 72 points unless given), summed over every instance</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/jobs/{id}?payload=true&output=true}</td><td>one job, its payload
 * and output only when asked for and allowed</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/jobs/{id}/retry}, {@code …/cancel}</td><td>one job</td></tr>
 * <tr><td>{@code DELETE /actuator/pgqueue/jobs/{id}}</td><td>a finished job</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/queues/{queue}/pause}, {@code …/resume},
 * {@code …/retry-failed}</td><td>a queue, in every instance</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/kinds/{kind}/retry-failed}</td><td>every failed job of a
 * kind</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/schedules}, {@code …/schedules/{name}}</td><td>recurring jobs, with
 * their last and next tick and who paused them</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/schedules/{name}/pause}, {@code …/resume}, {@code …/run-now};
 * {@code DELETE /actuator/pgqueue/schedules/{name}}</td><td>a recurring job</td></tr>
 * </table>
 *
 * <p>Its default access is read-only: the write operations answer only once
 * {@code management.endpoint.pgqueue.access=unrestricted}. Until then Spring Boot does not map them at
 * all, so they answer 404 as an unknown path would (Boot decides that, not pgqueue); the queues'
 * answer says so under {@code writes}. An operation on one job answers 200 when applied, 404 when
 * there is no such job and 409 when the job is running or in a state the operation does not apply to.
 *
 * <p>Answers are descriptors ({@link QueuesDescriptor}, {@link JobsDescriptor}, {@link JobDescriptor}
 * …), written by Actuator's own JSON mapper: fields without a value are left out. A job's payload,
 * output, error messages and progress message are user data: {@code management.endpoint.pgqueue.show-values}
 * decides who sees them as they are ({@code never} by default), everyone else sees
 * {@value JobDescriptor#HIDDEN} (an error keeps its exceptions' classes and frames), as Spring
 * Boot's own endpoints hide values. Over HTTP {@link QueueEndpointWebExtension} asks the request's
 * security context; elsewhere (JMX) {@code when-authorized} counts as allowed, as for Boot's
 * {@code env} endpoint.
 */
@Endpoint(id = "pgqueue", defaultAccess = Access.READ_ONLY)
public class QueueEndpoint {

	private static final int STATUS_CONFLICT = 409;

	private static final int STATUS_ACCEPTED = 202;

	private final JobAdmin admin;

	private final ObjectProvider<QueueEngine> engine;


	private final ObjectProvider<JobSchedules> schedules;

	private final boolean writable;

	private final Show showValues;

	/**
	 * @param admin acts on jobs and queues
	 * @param engine the engine whose pollers and services' readings the endpoint shows; its services
	 * run only in an application that runs jobs
	 * @param schedules the recurring jobs; none in an application that defines its own engine beans
	 * @param writable whether the endpoint's access lets its write operations be mapped
	 * @param showValues when payloads and outputs are shown as they are
	 */
	public QueueEndpoint(JobAdmin admin, ObjectProvider<QueueEngine> engine, ObjectProvider<JobSchedules> schedules, boolean writable, Show showValues) {
		this.admin = admin;
		this.engine = engine;
		this.schedules = schedules;
		this.writable = writable;
		this.showValues = showValues;
	}

	/**
	 * The queues: depth, oldest age, scheduled and running jobs, paused, and their signals; with shards,
	 * each shard's own jobs.
	 */
	@ReadOperation
	public QueuesDescriptor queues() {
		return new QueueOverview(this.admin, this.engine.getIfAvailable(), this.writable)
			.read();
	}

	/**
	 * Jobs newest first, filtered by queue, kind, state, tag, error text and finish time; {@code before}
	 * is a page's {@code next}; with {@code count=true}, also how many jobs match in all. {@code kinds}:
	 * the kinds pollers handle and schedules enqueue. {@code schedules}: every schedule. {@code history}:
	 * the queues' history over the last {@code hours}, in steps of {@code step} minutes.
	 */
	@ReadOperation
	public @Nullable OperationResponseBody jobs(@Selector String resource, @Nullable String queue,
			@Nullable String kind, @Nullable String state, @Nullable String tag, @Nullable String error,
			@Nullable String finishedSince, @Nullable String before, @Nullable Integer limit, @Nullable Boolean count,
			@Nullable Integer hours, @Nullable Integer step) {
		return jobs(resource, queue, kind, state, tag, error, finishedSince, before, limit, count, hours, step,
				this.showValues.isShown(true));
	}

	/**
	 * As {@link #jobs(String, String, String, String, String, String, String, String, Integer, Boolean, Integer, Integer)},
	 * for a caller who may or may not see the messages of the jobs' errors as they are.
	 * @param showUnsanitized whether the caller may see them; if not, each error keeps its exceptions'
	 * classes and frames only ({@link UserTexts#errorText})
	 */
	public @Nullable OperationResponseBody jobs(String resource, @Nullable String queue, @Nullable String kind,
			@Nullable String state, @Nullable String tag, @Nullable String error, @Nullable String finishedSince,
			@Nullable String before, @Nullable Integer limit, @Nullable Boolean count, @Nullable Integer hours,
			@Nullable Integer step, boolean showUnsanitized) {
		return switch (resource) {
			case "schedules" -> schedules();
			case "history" -> history(hours, step);
			case "kinds" -> new KindsDescriptor(this.admin.kinds());
			case "jobs" -> page(queue, kind, state, tag, error, finishedSince, before, limit, count, showUnsanitized);
			default -> null;
		};
	}

	private JobsDescriptor page(@Nullable String queue, @Nullable String kind, @Nullable String state,
			@Nullable String tag, @Nullable String error, @Nullable String finishedSince, @Nullable String before,
			@Nullable Integer limit, @Nullable Boolean count, boolean showUnsanitized) {
		JobQuery query;
		try {
			query = query(queue, kind, state, tag, error, finishedSince).before(blankToNull(before))
				.limit((limit != null) ? limit : JobQuery.DEFAULT_LIMIT);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		try {
			JobPage page = this.admin.list(query);
			return new JobsDescriptor(page.jobs().stream().map((job) -> JobDescriptor.of(job, showUnsanitized)).toList(),
					page.next(), Boolean.TRUE.equals(count) ? this.admin.count(query) : null);
		}
		catch (IllegalArgumentException ex) {
			// A cursor of another layout (a list across shards given to one database, say).
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	/**
	 * {@code POST jobs} with {@code action} {@code retry} (every failed job the filters match) or
	 * {@code cancel} (every waiting job they match), and the filters of {@link #jobs}: at least one of
	 * queue, kind, tag, error and finishedSince, unless a retry names {@code atMost}. A retry also
	 * takes {@code failedFor} (a duration such as {@code 10m} or {@code PT10M}), {@code batchSize} and
	 * {@code atMost}, as {@link RetryOptions}. Answers how many jobs changed.
	 */
	@WriteOperation
	public WebEndpointResponse<BulkActionDescriptor> actOnAll(@Selector String resource, String action,
			@Nullable String queue, @Nullable String kind, @Nullable String state, @Nullable String tag,
			@Nullable String error, @Nullable String finishedSince, @Nullable String failedFor,
			@Nullable Integer batchSize, @Nullable Integer atMost) {
		if (!"jobs".equals(resource)) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		int changed;
		try {
			JobQuery query = query(queue, kind, state, tag, error, finishedSince);
			AdminAction bulk = AdminAction.find(Target.MATCHING_JOBS, action)
				.orElseThrow(() -> new IllegalArgumentException("'" + action + "' is not an action on many jobs: use "
						+ String.join(" or ", AdminAction.names(Target.MATCHING_JOBS, false))));
			RetryOptions options = (bulk == AdminAction.RETRY_MATCHING) ? retryOptions(failedFor, batchSize, atMost)
					: RetryOptions.defaults();
			changed = bulk.apply(this.admin, jobSchedules(), Subject.matching(query, options)).changed();
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		return new WebEndpointResponse<>(new BulkActionDescriptor(action, changed), WebEndpointResponse.STATUS_OK);
	}

	/**
	 * A retry's options from a request, the defaults where it leaves them out.
	 * @throws IllegalArgumentException naming a bad value
	 */
	private static RetryOptions retryOptions(@Nullable String failedFor, @Nullable Integer batchSize,
			@Nullable Integer atMost) {
		RetryOptions options = RetryOptions.defaults();
		if (failedFor != null && !failedFor.isBlank()) {
			try {
				options = options.failedFor(DurationStyle.detectAndParse(failedFor.strip()));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(
						"failedFor '" + failedFor + "' is not a duration: write it as 10m, 2h or PT10M", ex);
			}
		}
		if (batchSize != null) {
			options = options.batchSize(batchSize);
		}
		if (atMost != null) {
			options = options.atMost(atMost);
		}
		return options;
	}

	/**
	 * The filters of a request as a query of the first page.
	 * @throws IllegalArgumentException naming a bad value
	 */
	private static JobQuery query(@Nullable String queue, @Nullable String kind, @Nullable String state,
			@Nullable String tag, @Nullable String error, @Nullable String finishedSince) {
		return JobQuery.all()
			.queue(blankToNull(queue))
			.kind(blankToNull(kind))
			.state(state(state))
			.tag(blankToNull(tag))
			.error(blankToNull(error))
			.finishedSince(instant("finishedSince", finishedSince));
	}

	private static @Nullable Instant instant(String name, @Nullable String value) {
		if (value == null || value.isBlank()) {
			return null;
		}
		try {
			return Instant.parse(value.strip());
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + value + "' is not an instant for " + name
					+ ": use ISO-8601 in UTC, such as 2026-11-26T08:00:00Z", ex);
		}
	}

	/**
	 * One job with its attempts; its payload only with {@code payload=true}, the output its listener
	 * returned only with {@code output=true}, each as it is only where {@code show-values} allows
	 * without a security context ({@code always} or {@code when-authorized}). Also one schedule.
	 */
	@ReadOperation
	public @Nullable OperationResponseBody job(@Selector String resource, @Selector String id,
			@Nullable Boolean payload, @Nullable Boolean output) {
		return job(resource, id, Boolean.TRUE.equals(payload), Boolean.TRUE.equals(output),
				this.showValues.isShown(true));
	}

	/**
	 * One job ({@code resource} {@code jobs}) or one schedule ({@code schedules}); {@code null} when
	 * there is none.
	 * @param payload whether the caller asks for the job's payload
	 * @param output whether the caller asks for the output its listener returned
	 * @param showUnsanitized whether the caller may see those as they are; if not, they read
	 * {@value JobDescriptor#HIDDEN} (and the payload is not read at all)
	 */
	public @Nullable OperationResponseBody job(String resource, String id, boolean payload, boolean output,
			boolean showUnsanitized) {
		if ("schedules".equals(resource)) {
			JobSchedules schedules = jobSchedules();
			return (schedules != null) ? schedules.get(id).map(ScheduleDescriptor::of).orElse(null) : null;
		}
		if (!"jobs".equals(resource)) {
			return null;
		}
		UUID jobId = jobId(id);
		// A payload is read (and its read logged) only for a caller allowed to see it.
		boolean readPayload = payload && showUnsanitized;
		JobDetails found = (readPayload ? this.admin.findWithPayload(jobId) : this.admin.find(jobId)).orElse(null);
		if (found == null) {
			return null;
		}
		List<AttemptDescriptor> attempts = this.admin.attempts(jobId)
			.stream()
			.map((attempt) -> AttemptDescriptor.of(attempt, showUnsanitized))
			.toList();
		ProgressDescriptor progress = this.admin.progress(jobId)
			.map((reported) -> ProgressDescriptor.of(reported, showUnsanitized))
			.orElse(null);
		String shownOutput = null;
		if (output) {
			shownOutput = this.admin.output(jobId)
				.map((value) -> showUnsanitized ? value : JobDescriptor.HIDDEN)
				.orElse(null);
		}
		String shownPayload = readPayload ? found.payload() : (payload ? JobDescriptor.HIDDEN : null);
		return JobDescriptor.of(found, shownPayload, attempts, progress, shownOutput, showUnsanitized);
	}

	/**
	 * {@code jobs/{id}/retry}, {@code jobs/{id}/cancel}; {@code queues/{queue}/pause},
	 * {@code queues/{queue}/resume}, {@code queues/{queue}/retry-failed};
	 * {@code kinds/{kind}/retry-failed}; {@code schedules/{name}/pause}, {@code …/resume},
	 * {@code …/run-now}.
	 */
	@WriteOperation
	public WebEndpointResponse<OperationResponseBody> act(@Selector String resource, @Selector String target,
			@Selector String action) {
		return Target.ofOne(resource)
			.flatMap((on) -> AdminAction.find(on, action))
			.filter((found) -> !found.deletes())
			.map((found) -> respond(found, target))
			.orElseGet(() -> new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND));
	}

	/** {@code jobs/{id}}: deletes a finished job; {@code schedules/{name}}: deletes a schedule. */
	@DeleteOperation
	public WebEndpointResponse<OperationResponseBody> delete(@Selector String resource, @Selector String id) {
		return Target.ofOne(resource)
			.flatMap(AdminAction::deleting)
			.map((found) -> respond(found, id))
			.orElseGet(() -> new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND));
	}

	/** Does an action on one job or one name: 404 where there is none of that name. */
	private WebEndpointResponse<OperationResponseBody> respond(AdminAction action, String target) {
		Subject subject = (action.target() == Target.JOB) ? Subject.job(jobId(target)) : Subject.named(target);
		Done done;
		try {
			done = action.apply(this.admin, jobSchedules(), subject);
		}
		catch (IllegalArgumentException ex) {
			// A name no queue, kind or schedule can have.
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		if (done.outcome() != null) {
			return new WebEndpointResponse<>(done.described(), status(done.outcome()));
		}
		return done.found() ? new WebEndpointResponse<>(done.described(), WebEndpointResponse.STATUS_OK)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

	/** Each queue's points over the window, durations in milliseconds. */
	private HistoryDescriptor history(@Nullable Integer hours, @Nullable Integer step) {
		Duration window = Duration.ofHours((hours != null) ? hours : 6);
		Duration stepDuration = (step != null) ? Duration.ofMinutes(step) : QueueHistory.stepFor(window);
		try {
			return HistoryDescriptor.of(window, stepDuration, this.admin.history(window, stepDuration));
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	private @Nullable JobSchedules jobSchedules() {
		return this.schedules.getIfAvailable();
	}

	/** Every schedule with its last and next tick and whether it is paused. */
	private @Nullable SchedulesDescriptor schedules() {
		JobSchedules schedules = jobSchedules();
		return (schedules != null) ? new SchedulesDescriptor(schedules.list().stream().map(ScheduleDescriptor::of).toList())
				: null;
	}

	private static int status(AdminResult.Outcome outcome) {
		return switch (outcome) {
			case APPLIED -> WebEndpointResponse.STATUS_OK;
			case NOT_FOUND -> WebEndpointResponse.STATUS_NOT_FOUND;
			case RUNNING, NOT_ALLOWED -> STATUS_CONFLICT;
			case CANCEL_REQUESTED -> STATUS_ACCEPTED;
		};
	}

	private static UUID jobId(String id) {
		try {
			return UUID.fromString(id);
		}
		catch (IllegalArgumentException ex) {
			String reason = "'" + id + "' is not a job id: use the UUID JobClient returned at enqueue";
			throw new InvalidEndpointRequestException(reason, reason);
		}
	}

	private static @Nullable JobState state(@Nullable String state) {
		if (state == null || state.isBlank()) {
			return null;
		}
		for (JobState candidate : JobState.values()) {
			if (candidate.sqlValue().equalsIgnoreCase(state.strip())) {
				return candidate;
			}
		}
		String reason = "'" + state + "' is not a job state: use one of "
				+ List.of(JobState.values()).stream().map(JobState::sqlValue).toList();
		throw new InvalidEndpointRequestException(reason, reason);
	}

	private static @Nullable String blankToNull(@Nullable String value) {
		return (value == null || value.isBlank()) ? null : value;
	}

}
