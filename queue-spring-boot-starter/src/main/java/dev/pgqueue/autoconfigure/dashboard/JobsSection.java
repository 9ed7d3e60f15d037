package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.AdminAction;
import dev.pgqueue.autoconfigure.UserTexts;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.Viewer;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.UriComponentsBuilder;

/**
 * The overview's jobs: the search form (queue, kind with suggestions, state, tag, error text, finish
 * time, job id), the page of jobs with each one's run time, the actions on every job the search
 * matches, and the page that confirms such an action with the number of jobs it will touch.
 */
final class JobsSection {

	/** How a finish time is shown in the search form and read back from it: minutes, in UTC. */
	private static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm", Locale.ROOT)
		.withZone(ZoneOffset.UTC);

	private JobsSection() {
	}

	/**
	 * What the jobs part of the overview shows.
	 * @param kinds the kinds to suggest in the search form
	 * @param bulk the action the search allows on every job it matches, or {@code null}
	 * @param notice what the last action on many jobs did, or {@code null}
	 */
	record Listing(JobQuery query, JobPage page, List<String> kinds, @Nullable Bulk bulk, @Nullable String notice) {
	}

	/** An action on every job a search matches, and how many jobs it would touch now. */
	record Bulk(Action action, long matching) {
	}

	/** What can be done to every job of a search: retry its failed jobs, cancel its waiting ones. */
	enum Action {

		RETRY(AdminAction.RETRY_MATCHING, "Retry"), CANCEL(AdminAction.CANCEL_MATCHING, "Cancel");

		/** What it does, through the admin's actions. */
		final AdminAction matching;

		final String label;

		Action(AdminAction matching, String label) {
			this.matching = matching;
			this.label = label;
		}

		/** Its name in the dashboard's requests. */
		String path() {
			return this.matching.actionName();
		}

		/**
		 * The action a search allows: retry when it lists failed jobs, cancel when it lists available or
		 * scheduled ones, provided it names more than a state (never every job of every queue).
		 */
		static @Nullable Action allowedBy(JobQuery query) {
			if (!query.narrowed() || query.state() == null) {
				return null;
			}
			return switch (query.state()) {
				case FAILED -> RETRY;
				case AVAILABLE, SCHEDULED -> CANCEL;
				default -> null;
			};
		}

		/** The dashboard's action on every job of a search that the admin's actions name so, if any. */
		static @Nullable Action named(@Nullable String path) {
			AdminAction found = AdminAction.find(AdminAction.Target.MATCHING_JOBS, path).orElse(null);
			for (Action action : values()) {
				if (action.matching == found) {
					return action;
				}
			}
			return null;
		}

	}

	/**
	 * The jobs a search finds, and what the last action on many jobs did; while some shard does not
	 * answer, no jobs, and why.
	 */
	static Listing read(JobAdmin admin, Viewer viewer, JobQuery query, @Nullable String did,
			@Nullable Integer changed) {
		Action done = Action.named(did);
		String notice = (done != null && changed != null) ? bulkNotice(done, changed) : null;
		try {
			// Counted only where the search allows an action on all its jobs, and the viewer may act.
			Action allowed = viewer.mayWrite() ? Action.allowedBy(query) : null;
			Bulk bulk = (allowed != null) ? new Bulk(allowed, admin.count(query)) : null;
			return new Listing(query, admin.list(query), admin.kinds(), bulk, notice);
		}
		catch (ShardsPartlyFailedException ex) {
			return new Listing(query, new JobPage(List.of(), null), List.of(), null,
					ShardsSection.unanswered("The jobs are listed from every shard", ex));
		}
	}

	private static String bulkNotice(Action action, int changed) {
		String jobs = (changed == 1) ? " job" : " jobs";
		return (action == Action.RETRY) ? "Retried " + changed + jobs + ": available to run again."
				: "Cancelled " + changed + jobs + ": they will not run.";
	}

	static void write(StringBuilder html, Viewer viewer, List<QueueSummary> queues, Listing listing) {
		JobQuery query = listing.query();
		html.append("<section><h2>Jobs</h2>");
		if (listing.notice() != null) {
			html.append("<p class=\"notice\" role=\"status\">").append(DashboardPages.escape(listing.notice()))
				.append("</p>");
		}
		filters(html, viewer, queues, listing.kinds(), query);
		html.append("<div id=\"jobs\" data-live>");
		if (listing.bulk() != null && viewer.mayWrite()) {
			Bulk bulk = listing.bulk();
			html.append("<p class=\"bulk\"><a class=\"bulk-").append(bulk.action().path()).append("\" href=\"")
				.append(DashboardPages.escape(DashboardPages.href(url(viewer.base() + "/jobs/bulk", query, null)
					.queryParam("action", bulk.action().path()))))
				.append("\">").append(bulk.action().label).append(" all ").append(bulk.matching()).append(' ')
				.append(query.state().sqlValue()).append(" jobs this search matches…</a></p>");
		}
		jobTable(html, viewer, listing.page().jobs());
		html.append("<nav class=\"pages\">");
		if (query.before() != null) {
			html.append("<a href=\"").append(DashboardPages.escape(jobsUrl(viewer, query, null))).append("\">Newest</a> ");
		}
		if (listing.page().next() != null) {
			html.append("<a rel=\"next\" href=\"")
				.append(DashboardPages.escape(jobsUrl(viewer, query, listing.page().next())))
				.append("\">Older</a>");
		}
		html.append("</nav></div></section>");
	}

	/**
	 * The page that asks before an action on every job of a search: what it does, to how many jobs
	 * (counted now), and the search; confirming posts the search again, so the action touches the
	 * jobs that match when it runs.
	 */
	static void confirm(StringBuilder html, Viewer viewer, JobQuery query, Action action, long matching) {
		String what = (action == Action.RETRY) ? "retry" : "cancel";
		html.append("<section><h2>").append(action.label).append(' ').append(matching).append(' ')
			.append(query.state().sqlValue()).append(matching == 1 ? " job" : " jobs").append("?</h2>")
			.append("<p class=\"confirm\">This will ").append(what).append(" <strong id=\"matching\">").append(matching)
			.append("</strong> ").append(query.state().sqlValue()).append(matching == 1 ? " job" : " jobs")
			.append(" that match ").append(DashboardPages.escape(query.describe()))
			.append(" now; jobs that come to match before you confirm are included.</p>");
		html.append("<form method=\"post\" class=\"action\" action=\"")
			.append(DashboardPages.escape(viewer.base() + "/jobs/bulk")).append("\">");
		hidden(html, "action", action.path());
		hidden(html, "expected", Long.toString(matching));
		hidden(html, "queue", query.queue());
		hidden(html, "kind", query.kind());
		hidden(html, "state", query.state().sqlValue());
		hidden(html, "tag", query.tag());
		hidden(html, "error", query.error());
		hidden(html, "finishedSince", (query.finishedSince() != null) ? query.finishedSince().toString() : null);
		viewer.formFields().forEach((name, value) -> hidden(html, name, value));
		html.append("<button type=\"submit\" class=\"confirm-").append(action.path()).append("\">").append(action.label)
			.append(' ').append(matching).append(matching == 1 ? " job" : " jobs").append("</button></form> ")
			.append(DashboardPages.link(jobsUrl(viewer, query, null), "Back to the jobs"))
			.append("</section>");
	}

	/**
	 * A finish time from the search form (a minute in UTC, as {@code datetime-local} sends it) or from a
	 * link (an ISO instant).
	 * @throws IllegalArgumentException naming the value when it is neither
	 */
	static @Nullable Instant finishedSince(@Nullable String value) {
		if (value == null || value.isBlank()) {
			return null;
		}
		String text = value.strip();
		try {
			return text.endsWith("Z") ? Instant.parse(text) : LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException("'" + value + "' is not a finish time: use 2026-11-26T08:00 (UTC)", ex);
		}
	}

	private static void filters(StringBuilder html, Viewer viewer, List<QueueSummary> queues, List<String> kinds,
			JobQuery query) {
		html.append("<form method=\"get\" action=\"").append(DashboardPages.escape(viewer.base()))
			.append("\" class=\"filters\" role=\"search\">")
			.append("<label>Queue <select name=\"queue\"><option value=\"\">any</option>");
		for (QueueSummary queue : queues) {
			DashboardPages.option(html, queue.queue(), queue.queue().equals(query.queue()));
		}
		if (query.queue() != null && queues.stream().noneMatch((queue) -> queue.queue().equals(query.queue()))) {
			DashboardPages.option(html, query.queue(), true);
		}
		html.append("</select></label> <label>Kind <input name=\"kind\" list=\"kinds\" value=\"")
			.append(value(query.kind())).append("\"></label><datalist id=\"kinds\">");
		for (String kind : kinds) {
			html.append("<option value=\"").append(DashboardPages.escape(kind)).append("\">");
		}
		html.append("</datalist> <label>State <select name=\"state\"><option value=\"\">any</option>");
		for (JobState state : JobState.values()) {
			DashboardPages.option(html, state.sqlValue(), state == query.state());
		}
		html.append("</select></label> <label>Tag <input name=\"tag\" value=\"").append(value(query.tag()))
			.append("\"></label> <label>Error <input name=\"error\" maxlength=\"").append(JobQuery.MAX_ERROR_TEXT)
			.append("\" value=\"").append(value(query.error()))
			.append("\"></label> <label>Finished since (UTC) <input type=\"datetime-local\" name=\"finishedSince\" ")
			.append("value=\"")
			.append((query.finishedSince() != null) ? MINUTE.format(query.finishedSince()) : "")
			.append("\"></label> <button type=\"submit\">Search</button></form>");
		html.append("<form method=\"get\" action=\"").append(DashboardPages.escape(viewer.base() + "/jobs/find"))
			.append("\" class=\"filters\"><label>Job id <input name=\"id\" size=\"36\" ")
			.append("placeholder=\"0b9a2f7e-3c1d-4c55-9a8e-1f0f1d2b3c4d\"></label> <button type=\"submit\">Open</button>")
			.append("</form>");
	}

	private static void jobTable(StringBuilder html, Viewer viewer, List<JobDetails> jobs) {
		if (jobs.isEmpty()) {
			html.append("<p>No jobs.</p>");
			return;
		}
		html.append("<table class=\"jobs\"><thead><tr><th>Job</th><th>Kind</th><th>Queue</th><th>State</th>")
			.append("<th>Attempts</th><th>Enqueued</th><th>Run time</th><th>Last error</th><th></th></tr></thead><tbody>");
		Instant now = Instant.now();
		for (JobDetails job : jobs) {
			String shown = UserTexts.errorText(job.lastError(), viewer.showValues());
			String error = (shown != null) ? shown.lines().findFirst().orElse("") : "";
			html.append("<tr data-job=\"").append(job.id()).append("\"><td>")
				.append(DashboardPages.link(viewer.base() + "/jobs/" + job.id(), job.id().toString().substring(0, 8)))
				.append("</td><td>").append(DashboardPages.escape(job.kind()))
				.append("</td><td>").append(DashboardPages.escape(job.queue()))
				.append("</td><td><span class=\"state ").append(job.state().sqlValue()).append("\">")
				.append(job.state().sqlValue()).append("</span>")
				.append("</td><td>").append(job.attempt()).append('/').append(job.maxAttempts())
				.append("</td><td title=\"").append(DashboardPages.time(job.createdAt())).append("\">")
				.append(DashboardPages.age(Duration.between(job.createdAt(), now))).append(" ago")
				.append("</td><td class=\"run-time\">").append(runTime(job, now))
				.append("</td><td class=\"error\">").append(DashboardPages.escape(error))
				.append("</td><td>");
			DashboardPages.actions(html, viewer, job);
			html.append("</td></tr>");
		}
		html.append("</tbody></table>");
	}

	/** How long the job's last attempt ran, or has run so far; a dash when it has not started. */
	static String runTime(JobDetails job, Instant now) {
		if (job.runTime() != null) {
			return duration(job.runTime());
		}
		if (job.state() == JobState.RUNNING && job.startedAt() != null) {
			return duration(Duration.between(job.startedAt(), now)) + " so far";
		}
		return "–";
	}

	/** A run time: milliseconds below a second, else as the ages are shown. */
	static String duration(Duration duration) {
		if (duration.isNegative()) {
			return "0 ms";
		}
		if (duration.toMillis() < 1_000) {
			return duration.toMillis() + " ms";
		}
		if (duration.toSeconds() < 60) {
			return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
		}
		return DashboardPages.age(duration);
	}

	static String jobsUrl(Viewer viewer, JobQuery query, @Nullable String before) {
		return DashboardPages.href(url(viewer.base(), query, before));
	}

	/** The overview's address for a search, at the page before {@code before}. */
	/** The overview's URL for a search, unencoded, for more parameters to be added. */
	static UriComponentsBuilder searchUrl(String base, JobQuery query) {
		return url(base, query, null);
	}

	private static UriComponentsBuilder url(String path, JobQuery query, @Nullable String before) {
		UriComponentsBuilder url = UriComponentsBuilder.fromPath(path);
		if (query.queue() != null) {
			url.queryParam("queue", query.queue());
		}
		if (query.kind() != null) {
			url.queryParam("kind", query.kind());
		}
		if (query.state() != null) {
			url.queryParam("state", query.state().sqlValue());
		}
		if (query.tag() != null) {
			url.queryParam("tag", query.tag());
		}
		if (query.error() != null) {
			url.queryParam("error", query.error());
		}
		if (query.finishedSince() != null) {
			url.queryParam("finishedSince", query.finishedSince().toString());
		}
		if (before != null) {
			url.queryParam("before", before);
		}
		return url;
	}

	private static void hidden(StringBuilder html, String name, @Nullable String value) {
		if (value != null) {
			html.append("<input type=\"hidden\" name=\"").append(DashboardPages.escape(name)).append("\" value=\"")
				.append(DashboardPages.escape(value)).append("\">");
		}
	}

	private static String value(@Nullable String value) {
		return (value != null) ? DashboardPages.escape(value) : "";
	}

}
