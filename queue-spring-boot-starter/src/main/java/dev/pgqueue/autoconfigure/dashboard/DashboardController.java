package dev.pgqueue.autoconfigure.dashboard;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.ActionDescriptors.ScheduleActionDescriptor;
import dev.pgqueue.autoconfigure.AdminAction;
import dev.pgqueue.autoconfigure.AdminAction.Done;
import dev.pgqueue.autoconfigure.AdminAction.Subject;
import dev.pgqueue.autoconfigure.AdminAction.Target;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.ScheduleNotice;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.ScheduleOutcome;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The dashboard's requests, below {@code pgqueue.dashboard.path} (a prefix the auto-configuration
 * gives this controller's mappings): the pages read through {@link JobAdmin}, and the actions post
 * to it through {@link AdminAction}, the endpoint's own, and send the browser back to a page (post,
 * redirect, get). {@link JobAdmin} logs each
 * action with the name its {@link dev.pgqueue.AdminCaller} gives, which with Spring Security is the
 * signed-in user of this request's thread. Schedules are read and changed through
 * {@link JobSchedules}, where the application has one; a schedule paused here records that name as
 * who paused it.
 */
@Controller
class DashboardController {

	private static final MediaType HTML = new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8);

	private static final CacheControl ASSET_CACHE = CacheControl.maxAge(Duration.ofHours(1)).cachePrivate();

	/** Its own script and stylesheet only; charts are inline SVG; forms post to itself; no frame. */
	static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
			+ "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

	private final JobAdmin admin;

	private final @Nullable JobSchedules schedules;

	private final QueueSummaries queues;

	private final @Nullable ShardSummaries shards;

	private final DashboardAccess access;

	private final DashboardPages pages;

	private final String path;

	/**
	 * @param schedules the application's schedules, or {@code null} where it has none to show
	 * @param shards reads each shard, or {@code null} without {@code pgqueue.shards}
	 */
	DashboardController(JobAdmin admin, @Nullable JobSchedules schedules, QueueSummaries queues,
			@Nullable ShardSummaries shards, DashboardAccess access, DashboardPages pages, String path) {
		this.admin = admin;
		this.schedules = schedules;
		this.queues = queues;
		this.shards = shards;
		this.access = access;
		this.pages = pages;
		this.path = path;
	}

	/**
	 * Headers on every answer of the dashboard: its pages load only their own script and stylesheet
	 * (they have no inline script or style), are never framed, and their types are not sniffed.
	 */
	@ModelAttribute
	void securityHeaders(HttpServletResponse response) {
		response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
		response.setHeader("X-Content-Type-Options", "nosniff");
		response.setHeader("X-Frame-Options", "DENY");
		response.setHeader("Referrer-Policy", "same-origin");
	}

	/**
	 * A request whose values the admin refuses (a cursor of another layout, a cursor across shards given
	 * to one database, a name no queue can have) is the request's fault: 400 with the reason, never 500.
	 */
	@ExceptionHandler(IllegalArgumentException.class)
	ResponseEntity<String> refused(IllegalArgumentException ex) {
		return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body(ex.getMessage());
	}

	@GetMapping({ "", "/" })
	ResponseEntity<String> overview(@ModelAttribute Search search,
			@RequestParam(required = false) @Nullable String schedule,
			@RequestParam(required = false) @Nullable String did,
			@RequestParam(required = false) @Nullable String outcome,
			@RequestParam(required = false) @Nullable UUID job,
			@RequestParam(required = false) @Nullable Integer changed,
			@RequestParam(required = false) @Nullable Integer hours, HttpServletRequest request) {
		this.access.checkRead(request);
		JobQuery query = search.query();
		List<ScheduleDetails> schedules = (this.schedules != null) ? this.schedules.list() : List.of();
		DashboardPages.Viewer viewer = viewer(request);
		List<QueueSummary> queues = List.of();
		String queuesProblem = null;
		try {
			queues = this.queues.read();
		}
		catch (ShardsPartlyFailedException ex) {
			queuesProblem = ShardsSection.unanswered("The queues' totals add up every shard", ex);
		}
		return html(this.pages.overview(viewer, queues, queuesProblem,
				(this.shards != null) ? this.shards.read() : null, schedules,
				scheduleNotice(schedule, did, outcome, job), JobsSection.read(this.admin, viewer, query, did, changed), history(hours)));
	}

	/** Opens the job of the id typed into the search; a text that is no id answers 400 saying so. */
	@GetMapping("/jobs/find")
	ResponseEntity<Void> find(@RequestParam(required = false) @Nullable String id, HttpServletRequest request) {
		this.access.checkRead(request);
		UUID parsed;
		try {
			parsed = UUID.fromString(Objects.requireNonNullElse(blankToNull(id), ""));
		}
		catch (IllegalArgumentException ex) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"'" + id + "' is not a job id: paste the UUID JobClient returned at enqueue", ex);
		}
		return seeOther(UriComponentsBuilder.fromPath(base(request) + "/jobs/" + parsed));
	}

	/** Asks before an action on every job a search matches, stating how many it would touch now. */
	@GetMapping("/jobs/bulk")
	ResponseEntity<String> confirmBulk(@RequestParam String action, @ModelAttribute Search search,
			HttpServletRequest request) {
		this.access.checkWrite(request);
		JobQuery query = search.query();
		JobsSection.Action bulk = bulkAction(action, query);
		return html(this.pages.confirmBulk(viewer(request), query, bulk, this.admin.count(query)));
	}

	/** Retries or cancels every job a search matches, then shows the search with how many changed. */
	@PostMapping("/jobs/bulk")
	ResponseEntity<Void> actOnAll(@RequestParam String action, @ModelAttribute Search search,
			HttpServletRequest request) {
		SameOriginCheck.check(request);
		this.access.checkWrite(request);
		JobQuery query = search.query();
		JobsSection.Action bulk = bulkAction(action, query);
		int changed = bulk.matching.apply(this.admin, this.schedules, Subject.matching(query, RetryOptions.defaults()))
			.changed();
		return seeOther(JobsSection.searchUrl(base(request), query)
			.queryParam("did", bulk.path())
			.queryParam("changed", changed));
	}

	/** The action a search allows on all its jobs, if it is the one asked for; else 400 saying why. */
	private static JobsSection.Action bulkAction(String action, JobQuery query) {
		JobsSection.Action asked = JobsSection.Action.named(action);
		if (asked == null || asked != JobsSection.Action.allowedBy(query)) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "'" + action + "' cannot be done to every job "
					+ "of this search: retry needs state failed, cancel state available or scheduled, and either a "
					+ "queue, kind, tag, error text or finish time");
		}
		return asked;
	}

	/**
	 * The queues' history over the window the page asks for (one of {@link HistoryCharts#WINDOWS}): one
	 * query for every queue. A history that cannot be read (also while a shard does not answer) leaves the
	 * rest of the page as it is.
	 */
	private HistoryCharts.View history(@Nullable Integer hours) {
		int window = HistoryCharts.hours(hours);
		Duration duration = Duration.ofHours(window);
		try {
			return new HistoryCharts.View(window, this.admin.history(duration, QueueHistory.stepFor(duration)), null);
		}
		catch (IllegalArgumentException | UnsupportedOperationException ex) {
			return new HistoryCharts.View(window, List.of(), ex.getMessage());
		}
		catch (ShardsPartlyFailedException ex) {
			return new HistoryCharts.View(window, List.of(), ShardsSection.unanswered("The history adds up every shard", ex));
		}
	}

	@GetMapping("/jobs/{id}")
	ResponseEntity<String> job(@PathVariable UUID id, @RequestParam(required = false) @Nullable String did,
			@RequestParam(required = false) @Nullable String outcome, HttpServletRequest request) {
		this.access.checkRead(request);
		JobDetails job = this.admin.find(id).orElse(null);
		if (job == null) {
			return ResponseEntity.status(HttpStatus.NOT_FOUND)
				.contentType(HTML)
				.body(this.pages.notFound(viewer(request), id));
		}
		boolean known = AdminAction.find(Target.JOB, did).filter(AdminAction::onDashboard).isPresent();
		return html(this.pages.job(viewer(request), job, this.admin.attempts(id), this.admin.progress(id).orElse(null),
				known ? did : null, outcome(outcome)));
	}

	/** Retries or cancels one job, then shows it with the outcome. */
	@PostMapping("/jobs/{id}/{action}")
	ResponseEntity<Void> actOnJob(@PathVariable UUID id, @PathVariable String action, HttpServletRequest request) {
		SameOriginCheck.check(request);
		AdminAction offered = offered(Target.JOB, action);
		this.access.checkWrite(request);
		Done done = offered.apply(this.admin, this.schedules, Subject.job(id));
		return seeOther(UriComponentsBuilder.fromPath(base(request) + "/jobs/" + id)
			.queryParam("did", offered.actionName())
			.queryParam("outcome", Objects.requireNonNull(done.outcome()).name().toLowerCase(Locale.ROOT)));
	}

	/** Pauses or resumes a queue, then shows the overview. */
	@PostMapping("/queues/{queue}/{action}")
	ResponseEntity<Void> actOnQueue(@PathVariable String queue, @PathVariable String action,
			HttpServletRequest request) {
		SameOriginCheck.check(request);
		AdminAction offered = offered(Target.QUEUE, action);
		this.access.checkWrite(request);
		offered.apply(this.admin, this.schedules, Subject.named(queue));
		return seeOther(UriComponentsBuilder.fromPath(base(request)));
	}

	/**
	 * Pauses, resumes, runs or deletes a schedule, then shows the overview with a notice: a pause or
	 * resume that changed nothing found the schedule as it wanted it already.
	 */
	@PostMapping("/schedules/{name}/{action}")
	ResponseEntity<Void> actOnSchedule(@PathVariable String name, @PathVariable String action,
			HttpServletRequest request) {
		SameOriginCheck.check(request);
		AdminAction offered = offered(Target.SCHEDULE, action);
		this.access.checkWrite(request);
		Done done = offered.apply(this.admin, this.schedules, Subject.named(name));
		ScheduleOutcome outcome = ScheduleOutcome.NOT_FOUND;
		UUID job = null;
		if (done.described() instanceof ScheduleActionDescriptor described) {
			outcome = Boolean.FALSE.equals(described.changed()) ? ScheduleOutcome.UNCHANGED : ScheduleOutcome.DONE;
			job = described.job();
		}
		return backToSchedules(request, new ScheduleNotice(name, offered.actionName(), outcome, job));
	}

	/** The action of that name the dashboard offers on a target; 404 for any other, as an unknown page. */
	private static AdminAction offered(Target target, String action) {
		return AdminAction.find(target, action)
			.filter(AdminAction::onDashboard)
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "'" + action
					+ "' is not an action the dashboard offers here: use one of "
					+ AdminAction.names(target, true)));
	}

	@GetMapping("/dashboard.css")
	ResponseEntity<Resource> stylesheet(HttpServletRequest request) {
		return asset(request, "dashboard.css", MediaType.valueOf("text/css"));
	}

	@GetMapping("/dashboard.js")
	ResponseEntity<Resource> script(HttpServletRequest request) {
		return asset(request, "dashboard.js", MediaType.valueOf("text/javascript"));
	}

	private ResponseEntity<Void> backToSchedules(HttpServletRequest request, ScheduleNotice notice) {
		UriComponentsBuilder location = UriComponentsBuilder.fromPath(base(request))
			.queryParam("schedule", notice.schedule())
			.queryParam("did", notice.did())
			.queryParam("outcome", notice.outcome().name().toLowerCase(Locale.ROOT));
		if (notice.job() != null) {
			location.queryParam("job", notice.job());
		}
		return seeOther(location);
	}

	private ResponseEntity<Resource> asset(HttpServletRequest request, String name, MediaType type) {
		this.access.checkRead(request);
		return ResponseEntity.ok()
			.contentType(type)
			.cacheControl(ASSET_CACHE)
			.body(new ClassPathResource(name, DashboardController.class));
	}

	private DashboardPages.Viewer viewer(HttpServletRequest request) {
		return new DashboardPages.Viewer(base(request), this.access.describe(request), this.access.mayWrite(request),
				this.access.formFields(request), this.access.showsValues(request));
	}

	private String base(HttpServletRequest request) {
		return request.getContextPath() + this.path;
	}

	private static ResponseEntity<Void> seeOther(UriComponentsBuilder location) {
		return ResponseEntity.status(HttpStatus.SEE_OTHER).location(URI.create(DashboardPages.href(location)))
			.build();
	}

	private static ResponseEntity<String> html(String body) {
		return ResponseEntity.ok().contentType(HTML).cacheControl(CacheControl.noStore()).body(body);
	}

	/**
	 * The filters of a search, as the overview, its links and the bulk actions carry them in their
	 * request parameters; {@code before} is the cursor of a page, which the bulk actions ignore.
	 */
	record Search(@Nullable String queue, @Nullable String kind, @Nullable String state, @Nullable String tag,
			@Nullable String error, @Nullable String finishedSince, @Nullable String before) {

		/** The search as a query of its page; 400 naming a filter the dashboard cannot read. */
		JobQuery query() {
			try {
				return JobQuery.all()
					.queue(blankToNull(this.queue))
					.kind(blankToNull(this.kind))
					.state((blankToNull(this.state) != null) ? JobState.fromSqlValue(this.state.trim()) : null)
					.tag(blankToNull(this.tag))
					.error(blankToNull(this.error))
					.finishedSince(JobsSection.finishedSince(this.finishedSince))
					.before(blankToNull(this.before));
			}
			catch (IllegalArgumentException ex) {
				throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "Not a job filter the dashboard knows: "
						+ ex.getMessage(), ex);
			}
		}

	}

	/** The notice the overview shows after an action on a schedule, if its parameters name one. */
	private static @Nullable ScheduleNotice scheduleNotice(@Nullable String schedule, @Nullable String did,
			@Nullable String outcome, @Nullable UUID job) {
		if (schedule == null || did == null || AdminAction.find(Target.SCHEDULE, did).isEmpty()) {
			return null;
		}
		for (ScheduleOutcome known : ScheduleOutcome.values()) {
			if (known.name().equalsIgnoreCase(outcome)) {
				return new ScheduleNotice(schedule, did, known, job);
			}
		}
		return null;
	}

	private static AdminResult.@Nullable Outcome outcome(@Nullable String outcome) {
		for (AdminResult.Outcome known : AdminResult.Outcome.values()) {
			if (known.name().equalsIgnoreCase(outcome)) {
				return known;
			}
		}
		return null;
	}

	private static @Nullable String blankToNull(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value.trim() : null;
	}

}
