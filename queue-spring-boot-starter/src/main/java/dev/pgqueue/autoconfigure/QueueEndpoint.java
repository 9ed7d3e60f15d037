package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.QueueHistory.Point;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code pgqueue} Actuator endpoint: the queues with their depth, oldest age, running jobs,
 * whether they are paused and the four signals of a queue that is being outgrown; jobs by queue,
 * kind and state, and one job; and, where the endpoint's access allows writes, retrying, cancelling
 * and deleting jobs and pausing and resuming queues, through {@link JobAdmin}.
 *
 * <table>
 * <caption>Operations</caption>
 * <tr><td>{@code GET /actuator/pgqueue}</td><td>queues and their signals</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/jobs?queue=&kind=&state=&tag=&error=&finishedSince=&before=&limit=&count=}</td>
 * <td>jobs, newest first, a page at a time ({@code next} is the next page's {@code before}); with
 * {@code count=true}, how many match in all</td></tr>
 * <tr><td>{@code POST /actuator/pgqueue/jobs} {@code {"action": "retry"|"cancel", "kind": …}}</td><td>every
 * failed (retry) or waiting (cancel) job the filters match</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/kinds}</td><td>the kinds pollers handle and schedules enqueue</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/history?hours=&step=}</td><td>each queue's completed, failed and
 * retried attempts, mean and longest wait and run time over the last hours (6 unless given), one point
 * per step of minutes (about 72 points unless given), summed over every instance</td></tr>
 * <tr><td>{@code GET /actuator/pgqueue/jobs/{id}?payload=true}</td><td>one job, its payload only when
 * asked for</td></tr>
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
 */
@Endpoint(id = "pgqueue", defaultAccess = Access.READ_ONLY)
public class QueueEndpoint {

	private static final int STATUS_CONFLICT = 409;

	private static final int STATUS_ACCEPTED = 202;

	private final JobAdmin admin;

	private final ObjectProvider<QueueEngine> engine;

	private final boolean writable;

	/**
	 * @param admin acts on jobs and queues
	 * @param engine the engine whose pollers and services' readings the endpoint shows; its services
	 * run only in an application that runs jobs
	 * @param writable whether the endpoint's access lets its write operations be mapped
	 */
	public QueueEndpoint(JobAdmin admin, ObjectProvider<QueueEngine> engine, boolean writable) {
		this.admin = admin;
		this.engine = engine;
		this.writable = writable;
	}

	private List<JobPoller> pollers() {
		QueueEngine current = this.engine.getIfAvailable();
		return (current != null) ? current.pollers() : List.of();
	}

	/** The stats reader of an engine that runs jobs, else null: only such an engine reads stats. */
	private @Nullable StatsReader maintenance() {
		QueueEngine current = this.engine.getIfAvailable();
		return (current != null && current.processing()) ? current.statsReader() : null;
	}

	/** The queues: depth, oldest age, scheduled and running jobs, paused, and their signals. */
	@ReadOperation
	public Map<String, Object> queues() {
		StatsReader services = maintenance();
		Map<String, QueueStats> stats = (services != null) ? services.lastStats() : Map.of();
		Set<String> paused = this.admin.pausedQueues();
		Map<String, Map<String, Object>> queues = new TreeMap<>();
		stats.forEach((queue, queueStats) -> queues.put(queue, stats(queueStats)));
		paused.forEach((queue) -> queues.computeIfAbsent(queue, (q) -> new LinkedHashMap<>()));
		for (JobPoller poller : pollers()) {
			Map<String, Object> details = queues.computeIfAbsent(poller.settings().name(), (q) -> new LinkedHashMap<>());
			details.put("polled", poller.isRunning());
			details.put("busyWorkers", poller.busySlots());
			details.put("concurrency", poller.settings().concurrency());
			details.put("mode", poller.settings().mode().name().toLowerCase(Locale.ROOT));
		}
		queues.forEach((queue, details) -> {
			details.put("paused", paused.contains(queue));
			ClaimProgress progress = (services != null) ? services.signals().get(queue) : null;
			if (progress != null) {
				details.put("signals", signals(progress));
			}
		});
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("queues", queues);
		body.put("writes", writes());
		if (services != null) {
			LockWaits lockWaits = services.lastLockWaits();
			Map<String, Object> waits = new LinkedHashMap<>();
			waits.put("waiting", lockWaits.waiting());
			waits.put("applicationName", lockWaits.applicationName());
			body.put("lockWaits", waits);
		}
		return body;
	}

	/**
	 * Whether the write operations answer, and if not why they answer 404: a caller that posts to a
	 * read-only endpoint finds the reason where it reads the queues.
	 */
	private Map<String, Object> writes() {
		Map<String, Object> writes = new LinkedHashMap<>();
		writes.put("enabled", this.writable);
		if (!this.writable) {
			writes.put("reason", "The endpoint's access is read-only, so Spring Boot does not map its write operations "
					+ "(retry, cancel, delete, pause, resume, retry-failed): they answer 404. Set "
					+ "management.endpoint.pgqueue.access=unrestricted where only trusted callers reach Actuator.");
		}
		return writes;
	}

	/**
	 * Jobs newest first, filtered by queue, kind, state, tag, error text and finish time; {@code before}
	 * is a page's {@code next}; with {@code count=true}, also how many jobs match in all. {@code kinds}:
	 * the kinds pollers handle and schedules enqueue. {@code schedules}: every schedule. {@code history}:
	 * the queues' history over the last {@code hours}, in steps of {@code step} minutes.
	 */
	@ReadOperation
	public @Nullable Map<String, Object> jobs(@Selector String resource, @Nullable String queue, @Nullable String kind,
			@Nullable String state, @Nullable String tag, @Nullable String error, @Nullable String finishedSince,
			@Nullable String before, @Nullable Integer limit, @Nullable Boolean count, @Nullable Integer hours,
			@Nullable Integer step) {
		if ("schedules".equals(resource)) {
			return schedules();
		}
		if ("history".equals(resource)) {
			return history(hours, step);
		}
		if ("kinds".equals(resource)) {
			return Map.of("kinds", this.admin.kinds());
		}
		if (!"jobs".equals(resource)) {
			return null;
		}
		JobQuery query;
		try {
			query = query(queue, kind, state, tag, error, finishedSince).before(blankToNull(before))
				.limit((limit != null) ? limit : JobQuery.DEFAULT_LIMIT);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		JobPage page = this.admin.list(query);
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("jobs", page.jobs().stream().map(QueueEndpoint::job).toList());
		body.put("next", page.next());
		if (Boolean.TRUE.equals(count)) {
			body.put("matching", this.admin.count(query));
		}
		return body;
	}

	/**
	 * {@code POST jobs} with {@code action} {@code retry} (every failed job the filters match) or
	 * {@code cancel} (every waiting job they match), and the filters of {@link #jobs}: at least one of
	 * queue, kind, tag, error and finishedSince. Answers how many jobs changed.
	 */
	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> actOnAll(@Selector String resource, String action,
			@Nullable String queue, @Nullable String kind, @Nullable String state, @Nullable String tag,
			@Nullable String error, @Nullable String finishedSince) {
		if (!"jobs".equals(resource)) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		int changed;
		try {
			JobQuery query = query(queue, kind, state, tag, error, finishedSince);
			changed = switch (action) {
				case "retry" -> this.admin.retryAll(query);
				case "cancel" -> this.admin.cancelAll(query);
				default -> throw new IllegalArgumentException(
						"'" + action + "' is not an action on many jobs: use retry or cancel");
			};
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("action", action);
		body.put("changed", changed);
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
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
	 * returned only with {@code output=true} (either may hold personal data).
	 */
	@ReadOperation
	public @Nullable Map<String, Object> job(@Selector String resource, @Selector String id,
			@Nullable Boolean payload, @Nullable Boolean output) {
		if ("schedules".equals(resource)) {
			JobSchedules schedules = jobSchedules();
			return (schedules != null) ? schedules.get(id).map(QueueEndpoint::schedule).orElse(null) : null;
		}
		if (!"jobs".equals(resource)) {
			return null;
		}
		UUID jobId = jobId(id);
		return (Boolean.TRUE.equals(payload) ? this.admin.findWithPayload(jobId) : this.admin.find(jobId))
			.map((found) -> {
				Map<String, Object> details = job(found);
				details.put("attempts", this.admin.attempts(jobId).stream().map(QueueEndpoint::attempt).toList());
				this.admin.progress(jobId).ifPresent((progress) -> {
					Map<String, Object> running = new LinkedHashMap<>();
					running.put("percent", progress.percent());
					running.put("message", progress.message());
					running.put("reportedAt", text(progress.reportedAt()));
					running.put("cancelRequestedAt", text(progress.cancelRequestedAt()));
					details.put("progress", running);
				});
				if (Boolean.TRUE.equals(output)) {
					details.put("output", this.admin.output(jobId).orElse(null));
				}
				return details;
			})
			.orElse(null);
	}

	/**
	 * {@code jobs/{id}/retry}, {@code jobs/{id}/cancel}; {@code queues/{queue}/pause},
	 * {@code queues/{queue}/resume}, {@code queues/{queue}/retry-failed};
	 * {@code kinds/{kind}/retry-failed}.
	 */
	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> act(@Selector String resource, @Selector String target,
			@Selector String action) {
		return switch (resource + "/" + action) {
			case "jobs/retry" -> response(this.admin.retry(jobId(target)));
			case "jobs/cancel" -> response(this.admin.cancel(jobId(target)));
			case "queues/pause" -> queue(target, true, this.admin.pause(target));
			case "queues/resume" -> queue(target, false, this.admin.resume(target));
			case "queues/retry-failed" -> retried("queue", target, this.admin.retryFailed(target, null));
			case "kinds/retry-failed" -> retried("kind", target, this.admin.retryFailed(null, target));
			case "schedules/pause", "schedules/resume", "schedules/run-now" -> scheduleAction(target, action);
			default -> new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		};
	}

	/** {@code jobs/{id}}: deletes a finished job; {@code schedules/{name}}: deletes a schedule. */
	@DeleteOperation
	public WebEndpointResponse<Map<String, Object>> delete(@Selector String resource, @Selector String id) {
		if ("schedules".equals(resource)) {
			JobSchedules schedules = jobSchedules();
			if (schedules == null || !schedules.delete(id)) {
				return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
			}
			return new WebEndpointResponse<>(Map.of("schedule", id, "deleted", true), WebEndpointResponse.STATUS_OK);
		}
		if (!"jobs".equals(resource)) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		return response(this.admin.delete(jobId(id)));
	}

	/** Each queue's points over the window, durations in milliseconds. */
	private Map<String, Object> history(@Nullable Integer hours, @Nullable Integer step) {
		Duration window = Duration.ofHours((hours != null) ? hours : 6);
		Duration stepDuration = (step != null) ? Duration.ofMinutes(step) : QueueHistory.stepFor(window);
		List<QueueHistory> histories;
		try {
			histories = this.admin.history(window, stepDuration);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
		Map<String, Object> queues = new TreeMap<>();
		for (QueueHistory history : histories) {
			queues.put(history.queue(), history.points().stream().map(QueueEndpoint::point).toList());
		}
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("window", window.toString());
		body.put("step", stepDuration.toString());
		body.put("queues", queues);
		return body;
	}

	private static Map<String, Object> point(Point point) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("start", point.start().toString());
		details.put("completed", point.completed());
		details.put("failed", point.failed());
		details.put("retried", point.retried());
		details.put("meanWaitMs", point.meanWait().toMillis());
		details.put("maxWaitMs", point.maxWait().toMillis());
		details.put("meanRunMs", point.meanRun().toMillis());
		details.put("maxRunMs", point.maxRun().toMillis());
		return details;
	}

	private @Nullable JobSchedules jobSchedules() {
		QueueEngine current = this.engine.getIfAvailable();
		return (current != null) ? current.schedules() : null;
	}

	/** Every schedule with its last and next tick and whether it is paused. */
	private @Nullable Map<String, Object> schedules() {
		JobSchedules schedules = jobSchedules();
		if (schedules == null) {
			return null;
		}
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("schedules", schedules.list().stream().map(QueueEndpoint::schedule).toList());
		return body;
	}

	private WebEndpointResponse<Map<String, Object>> scheduleAction(String name, String action) {
		JobSchedules schedules = jobSchedules();
		if (schedules == null || schedules.get(name).isEmpty()) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("schedule", name);
		switch (action) {
			case "pause" -> body.put("changed", schedules.pause(name));
			case "resume" -> body.put("changed", schedules.resume(name));
			default -> body.put("job", schedules.runNow(name));
		}
		schedules.get(name).ifPresent((schedule) -> body.put("paused", schedule.paused()));
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
	}

	static Map<String, Object> schedule(ScheduleDetails schedule) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("name", schedule.name());
		details.put("cron", schedule.cron());
		details.put("zone", schedule.zone().getId());
		details.put("kind", schedule.kind());
		details.put("queue", schedule.queue());
		details.put("missed", schedule.missed().name().toLowerCase(Locale.ROOT));
		details.put("overlap", schedule.overlap().name().toLowerCase(Locale.ROOT));
		details.put("nextTick", schedule.nextTick().toString());
		details.put("lastTick", (schedule.lastTick() != null) ? schedule.lastTick().toString() : null);
		details.put("lastJob", schedule.lastJob());
		details.put("paused", schedule.paused());
		details.put("pausedBy", schedule.pausedBy());
		details.put("pausedAt", (schedule.pausedAt() != null) ? schedule.pausedAt().toString() : null);
		details.put("declared", schedule.declared());
		return details;
	}

	private static WebEndpointResponse<Map<String, Object>> response(AdminResult result) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("id", result.id());
		body.put("outcome", result.outcome().name().toLowerCase(Locale.ROOT));
		body.put("state", (result.state() != null) ? result.state().sqlValue() : null);
		int status = switch (result.outcome()) {
			case APPLIED -> WebEndpointResponse.STATUS_OK;
			case NOT_FOUND -> WebEndpointResponse.STATUS_NOT_FOUND;
			case RUNNING, NOT_ALLOWED -> STATUS_CONFLICT;
			case CANCEL_REQUESTED -> STATUS_ACCEPTED;
		};
		return new WebEndpointResponse<>(body, status);
	}

	/** A queue after a pause or a resume: {@code paused} now, and whether that changed anything. */
	private static WebEndpointResponse<Map<String, Object>> queue(String queue, boolean paused, boolean changed) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("queue", queue);
		body.put("paused", paused);
		body.put("changed", changed);
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
	}

	private static WebEndpointResponse<Map<String, Object>> retried(String scope, String name, int retried) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put(scope, name);
		body.put("retried", retried);
		return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
	}

	private static Map<String, Object> stats(QueueStats stats) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("depth", stats.available());
		details.put("oldestAge", stats.oldestAvailableAge().toString());
		details.put("scheduled", stats.scheduled());
		details.put("running", stats.running());
		return details;
	}

	/** The signals of a queue polled here: poll cycle, claims without progress, SLA. */
	private static Map<String, Object> signals(ClaimProgress progress) {
		Map<String, Object> signals = new LinkedHashMap<>();
		Duration p99 = progress.pollCycleP99();
		signals.put("pollCycle", PollCycleAssessment.of(p99).label());
		signals.put("pollCycleP99", p99.toString());
		signals.put("jobsClaimed", progress.jobsClaimed());
		signals.put("unproductiveClaims", progress.unproductiveClaims());
		if (progress.sla() != null) {
			signals.put("sla", progress.slaSlipping() ? "slipping" : "met");
			signals.put("slaMissed", progress.slaMissed());
		}
		return signals;
	}

	private static Map<String, Object> job(JobDetails job) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("id", job.id());
		details.put("kind", job.kind());
		details.put("queue", job.queue());
		details.put("state", job.state().sqlValue());
		details.put("priority", job.priority());
		details.put("attempt", job.attempt());
		details.put("maxAttempts", job.maxAttempts());
		details.put("lastError", job.lastError());
		details.put("createdAt", text(job.createdAt()));
		details.put("runAt", text(job.runAt()));
		details.put("startedAt", text(job.startedAt()));
		details.put("finishedAt", text(job.finishedAt()));
		details.put("runTime", text(job.runTime()));
		details.put("snoozes", job.snoozes());
		details.put("tags", job.tags());
		if (job.payload() != null) {
			details.put("payload", job.payload());
		}
		return details;
	}

	private static Map<String, Object> attempt(JobAttempt attempt) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("attempt", attempt.attempt());
		details.put("startedAt", text(attempt.startedAt()));
		details.put("finishedAt", text(attempt.finishedAt()));
		details.put("outcome", attempt.outcome().name().toLowerCase(Locale.ROOT));
		details.put("error", attempt.error());
		details.put("message", attempt.message());
		return details;
	}

	private static String text(Object value) {
		return (value != null) ? value.toString() : null;
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

	private static JobState state(@Nullable String state) {
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

	private static String blankToNull(@Nullable String value) {
		return (value == null || value.isBlank()) ? null : value;
	}

}
