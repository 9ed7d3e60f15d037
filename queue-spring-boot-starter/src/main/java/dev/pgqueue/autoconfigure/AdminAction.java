package dev.pgqueue.autoconfigure;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiPredicate;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.autoconfigure.ActionDescriptors.BulkActionDescriptor;
import dev.pgqueue.autoconfigure.ActionDescriptors.JobActionDescriptor;
import dev.pgqueue.autoconfigure.ActionDescriptors.QueueActionDescriptor;
import dev.pgqueue.autoconfigure.ActionDescriptors.RetriedDescriptor;
import dev.pgqueue.autoconfigure.ActionDescriptors.ScheduleActionDescriptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * The admin's actions, the one place that maps an action's name to a call on {@link JobAdmin} (or
 * {@link JobSchedules}) and describes what it did: the {@code pgqueue} endpoint and the dashboard both
 * find their actions here by what they apply to and their name, and apply them through
 * {@link #apply}. The endpoint offers every action; the dashboard those {@link #onDashboard()} says.
 */
public enum AdminAction {

	/** Retries one job. */
	RETRY_JOB(Target.JOB, "retry", true, (admin, schedules, on) -> Done.of(admin.retry(on.job()))),

	/** Cancels one job, or asks a running one to stop. */
	CANCEL_JOB(Target.JOB, "cancel", true, (admin, schedules, on) -> Done.of(admin.cancel(on.job()))),

	/** Deletes a finished job. */
	DELETE_JOB(Target.JOB, "delete", false, (admin, schedules, on) -> Done.of(admin.delete(on.job()))),

	/** Retries every failed job a query matches. */
	RETRY_MATCHING(Target.MATCHING_JOBS, "retry", true, (admin, schedules, on) -> Done
		.of(new BulkActionDescriptor("retry", admin.retryAll(on.query(), on.options())))),

	/** Cancels every waiting job a query matches. */
	CANCEL_MATCHING(Target.MATCHING_JOBS, "cancel", true,
			(admin, schedules, on) -> Done.of(new BulkActionDescriptor("cancel", admin.cancelAll(on.query())))),

	/** Pauses a queue in every instance. */
	PAUSE_QUEUE(Target.QUEUE, "pause", true,
			(admin, schedules, on) -> Done.of(new QueueActionDescriptor(on.name(), true, admin.pause(on.name())))),

	/** Resumes a queue in every instance. */
	RESUME_QUEUE(Target.QUEUE, "resume", true,
			(admin, schedules, on) -> Done.of(new QueueActionDescriptor(on.name(), false, admin.resume(on.name())))),

	/** Retries every failed job of a queue. */
	RETRY_FAILED_OF_QUEUE(Target.QUEUE, "retry-failed", false, (admin, schedules, on) -> Done
		.of(new RetriedDescriptor(on.name(), null, admin.retryFailed(on.name(), null)))),

	/** Retries every failed job of a kind. */
	RETRY_FAILED_OF_KIND(Target.KIND, "retry-failed", false, (admin, schedules, on) -> Done
		.of(new RetriedDescriptor(null, on.name(), admin.retryFailed(null, on.name())))),

	/** Pauses a recurring job. */
	PAUSE_SCHEDULE(Target.SCHEDULE, "pause", true,
			(admin, schedules, on) -> changeSchedule(schedules, on.name(), JobSchedules::pause)),

	/** Resumes a paused recurring job. */
	RESUME_SCHEDULE(Target.SCHEDULE, "resume", true,
			(admin, schedules, on) -> changeSchedule(schedules, on.name(), JobSchedules::resume)),

	/** Enqueues a recurring job's job now. */
	RUN_SCHEDULE_NOW(Target.SCHEDULE, "run-now", true, (admin, schedules, on) -> runNow(schedules, on.name())),

	/** Deletes a recurring job. */
	DELETE_SCHEDULE(Target.SCHEDULE, "delete", true,
			(admin, schedules, on) -> deleteSchedule(schedules, on.name()));

	private final Target target;

	private final String actionName;

	private final boolean onDashboard;

	private final Operation operation;

	AdminAction(Target target, String actionName, boolean onDashboard, Operation operation) {
		this.target = target;
		this.actionName = actionName;
		this.onDashboard = onDashboard;
		this.operation = operation;
	}

	/** What the action applies to. */
	public Target target() {
		return this.target;
	}

	/** The action's name in the endpoint's and the dashboard's paths and parameters. */
	public String actionName() {
		return this.actionName;
	}

	/** Whether the dashboard offers the action (the endpoint offers every one). */
	public boolean onDashboard() {
		return this.onDashboard;
	}

	/**
	 * Does the action.
	 * @param admin the admin it calls
	 * @param schedules the recurring jobs, or {@code null} where the application has none
	 * @param subject what it applies to, of the kind {@link #target()} says
	 * @return what it did; {@linkplain Done#found() not found} where a schedule has no such name
	 */
	public Done apply(JobAdmin admin, @Nullable JobSchedules schedules, Subject subject) {
		return this.operation.apply(admin, schedules, subject);
	}

	/** The action of that name on that target, if there is one. */
	public static Optional<AdminAction> find(Target target, @Nullable String name) {
		return Arrays.stream(values())
			.filter((action) -> action.target == target && action.actionName.equals(name))
			.findFirst();
	}

	/**
	 * Whether the action deletes what it applies to: the endpoint answers it to {@code DELETE}, not
	 * to a {@code POST} of its name.
	 */
	public boolean deletes() {
		return this == DELETE_JOB || this == DELETE_SCHEDULE;
	}

	/** The action that deletes what a target names, if there is one. */
	public static Optional<AdminAction> deleting(Target target) {
		return Arrays.stream(values()).filter((action) -> action.target == target && action.deletes()).findFirst();
	}

	/** The names of the actions on a target, all of them or only the dashboard's. */
	public static List<String> names(Target target, boolean dashboardOnly) {
		return Arrays.stream(values())
			.filter((action) -> action.target == target && (action.onDashboard || !dashboardOnly))
			.map(AdminAction::actionName)
			.toList();
	}

	private static Done changeSchedule(@Nullable JobSchedules schedules, String name,
			BiPredicate<JobSchedules, String> change) {
		if (schedules == null || schedules.get(name).isEmpty()) {
			return Done.NOT_FOUND;
		}
		boolean changed = change.test(schedules, name);
		return Done.of(new ScheduleActionDescriptor(name, changed, null, paused(schedules, name), null));
	}

	private static Done runNow(@Nullable JobSchedules schedules, String name) {
		if (schedules == null || schedules.get(name).isEmpty()) {
			return Done.NOT_FOUND;
		}
		UUID job;
		try {
			job = schedules.runNow(name);
		}
		catch (IllegalArgumentException ex) {
			// What runNow throws for a name no schedule has; anything else is not a missing schedule.
			if (schedules.get(name).isPresent()) {
				throw ex;
			}
			return Done.NOT_FOUND;
		}
		return Done.of(new ScheduleActionDescriptor(name, null, job, paused(schedules, name), null));
	}

	private static Done deleteSchedule(@Nullable JobSchedules schedules, String name) {
		if (schedules == null || !schedules.delete(name)) {
			return Done.NOT_FOUND;
		}
		return Done.of(new ScheduleActionDescriptor(name, null, null, null, true));
	}

	private static @Nullable Boolean paused(JobSchedules schedules, String name) {
		return schedules.get(name).map((schedule) -> schedule.paused()).orElse(null);
	}

	/** What an action applies to, named as the endpoint's paths name it. */
	public enum Target {

		/** One job, by its id. */
		JOB("jobs"),

		/** Every job a query matches. */
		MATCHING_JOBS("jobs"),

		/** A queue, by its name. */
		QUEUE("queues"),

		/** A kind of job, by its name. */
		KIND("kinds"),

		/** A recurring job, by its name. */
		SCHEDULE("schedules");

		private final String resource;

		Target(String resource) {
			this.resource = resource;
		}

		/** The target of one job or one name that an endpoint path's resource names, if any. */
		public static Optional<Target> ofOne(String resource) {
			return Arrays.stream(values())
				.filter((target) -> target != MATCHING_JOBS && target.resource.equals(resource))
				.findFirst();
		}

	}

	/**
	 * What an action applies to: a job's id, a query with a retry's options, or a name.
	 *
	 * @param jobId the job, for {@link Target#JOB}
	 * @param jobQuery the jobs, for {@link Target#MATCHING_JOBS}
	 * @param retryOptions how to retry them
	 * @param targetName the queue, kind or schedule
	 */
	public record Subject(@Nullable UUID jobId, @Nullable JobQuery jobQuery, @Nullable RetryOptions retryOptions,
			@Nullable String targetName) {

		/** One job. */
		public static Subject job(UUID id) {
			return new Subject(id, null, null, null);
		}

		/** Every job a query matches; a retry uses the options. */
		public static Subject matching(JobQuery query, RetryOptions options) {
			return new Subject(null, query, options, null);
		}

		/** A queue, a kind or a schedule. */
		public static Subject named(String name) {
			return new Subject(null, null, null, name);
		}

		UUID job() {
			return Objects.requireNonNull(this.jobId, "an action on one job needs its id");
		}

		JobQuery query() {
			return Objects.requireNonNull(this.jobQuery, "an action on many jobs needs a query");
		}

		RetryOptions options() {
			return (this.retryOptions != null) ? this.retryOptions : RetryOptions.defaults();
		}

		String name() {
			return Objects.requireNonNull(this.targetName, "an action on a queue, kind or schedule needs its name");
		}

	}

	/**
	 * What an action did.
	 *
	 * @param described the endpoint's answer, or {@code null} where there was nothing of that name
	 * @param outcome the outcome of an action on one job, {@code null} for any other
	 */
	public record Done(@Nullable OperationResponseBody described, AdminResult.@Nullable Outcome outcome) {

		static final Done NOT_FOUND = new Done(null, null);

		static Done of(OperationResponseBody described) {
			return new Done(described, null);
		}

		static Done of(AdminResult result) {
			return new Done(JobActionDescriptor.of(result), result.outcome());
		}

		/** Whether the action found what it applies to (a missing job is told by its outcome). */
		public boolean found() {
			return this.described != null;
		}

		/** How many jobs an action on many jobs changed; 0 for any other. */
		public int changed() {
			return (this.described instanceof BulkActionDescriptor bulk) ? bulk.changed() : 0;
		}

	}

	@FunctionalInterface
	private interface Operation {

		Done apply(JobAdmin admin, @Nullable JobSchedules schedules, Subject subject);

	}

}
