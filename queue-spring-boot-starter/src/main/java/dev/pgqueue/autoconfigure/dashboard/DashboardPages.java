package dev.pgqueue.autoconfigure.dashboard;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobProgress;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.autoconfigure.ShardReading;
import dev.pgqueue.autoconfigure.UserTexts;
import dev.pgqueue.autoconfigure.dashboard.QueueSummary.KindRateUse;
import dev.pgqueue.autoconfigure.dashboard.QueueSummary.RateUse;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.HtmlUtils;
import org.springframework.web.util.UriComponentsBuilder;
import org.springframework.web.util.UriUtils;

/**
 * Writes the dashboard's pages as HTML: the queues and schedules with the job list, and one job.
 * Parts marked {@code data-live} are the ones {@code dashboard.js} replaces when it reloads the page;
 * forms that act post to the controller and carry the fields {@link DashboardAccess} asks for.
 */
final class DashboardPages {

	private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'", Locale.ROOT)
		.withZone(ZoneOffset.UTC);

	private final Duration refreshInterval;

	private final HistoryCharts historyCharts = new HistoryCharts();

	DashboardPages(Duration refreshInterval) {
		this.refreshInterval = refreshInterval;
	}

	/**
	 * What the page is for: its base path, what its user may do, the fields of its forms, and whether
	 * its user sees the messages of errors and progress as they are ({@link UserTexts}).
	 */
	record Viewer(String base, String description, boolean mayWrite, Map<String, String> formFields,
			boolean showValues) {
	}

	/** What an action on a schedule came to: done, nothing to change, or no schedule of that name. */
	enum ScheduleOutcome {

		DONE, UNCHANGED, NOT_FOUND

	}

	/**
	 * What came of an action on a schedule, for the overview the action sends the browser back to.
	 * @param did {@code pause}, {@code resume}, {@code run-now} or {@code delete}
	 * @param job the job run now, or {@code null}
	 */
	record ScheduleNotice(String schedule, String did, ScheduleOutcome outcome, @Nullable UUID job) {
	}

	/**
	 * The overview, with the queues' history charts after the queues when {@code history} is given.
	 * @param queuesProblem why the queues could not be read, or {@code null}
	 * @param shards each shard, or {@code null} without shards
	 */
	String overview(Viewer viewer, List<QueueSummary> queues, @Nullable String queuesProblem,
			@Nullable List<ShardReading> shards, List<ScheduleDetails> schedules, @Nullable ScheduleNotice notice,
			JobsSection.Listing jobs, HistoryCharts.@Nullable View history) {
		StringBuilder html = new StringBuilder();
		open(html, viewer, "pgqueue");
		if (notice != null) {
			html.append("<p class=\"notice\" role=\"status\">").append(SchedulesSection.notice(viewer, notice)).append("</p>");
		}
		html.append("<section><h2>Queues</h2><div id=\"queues\" data-live>");
		if (queuesProblem != null) {
			html.append("<p class=\"notice\">").append(escape(queuesProblem)).append("</p>");
		}
		else {
			queueTable(html, viewer, queues);
		}
		html.append("</div></section>");
		if (shards != null) {
			html.append("<section><h2>Shards</h2><div id=\"shards\" data-live>");
			ShardsSection.table(html, viewer, shards);
			html.append("</div></section>");
		}
		if (history != null) {
			this.historyCharts.append(html, viewer, queues.stream().map(QueueSummary::queue).toList(), history);
		}
		// The live part is there even when empty, so that a reload shows the first schedule and drops the last.
		html.append("<div id=\"schedules\" data-live>");
		if (!schedules.isEmpty()) {
			html.append("<section><h2>Schedules</h2>");
			SchedulesSection.table(html, viewer, schedules);
			html.append("</section>");
		}
		html.append("</div>");
		JobsSection.write(html, viewer, queues, jobs);
		return close(html);
	}

	String job(Viewer viewer, JobDetails job, List<JobAttempt> attempts, @Nullable JobProgress progress,
			@Nullable String did, AdminResult.@Nullable Outcome outcome) {
		StringBuilder html = new StringBuilder();
		open(html, viewer, "Job " + job.id());
		if (did != null && outcome != null) {
			html.append("<p class=\"notice\" role=\"status\">").append(escape(notice(did, outcome))).append("</p>");
		}
		html.append("<section><h2>Job <code>").append(job.id()).append("</code></h2><div id=\"job\" data-live>");
		html.append("<dl class=\"job\">");
		term(html, "Kind", escape(job.kind()));
		term(html, "Queue", link(queueUrl(viewer, job.queue()), job.queue()));
		term(html, "State", "<span class=\"state " + job.state().sqlValue() + "\">" + job.state().sqlValue()
				+ "</span>");
		term(html, "Attempts", job.attempt() + " of " + job.maxAttempts());
		term(html, "Priority", Integer.toString(job.priority()));
		term(html, "Enqueued", time(job.createdAt()));
		term(html, "Due", time(job.runAt()));
		term(html, "Last started", time(job.startedAt()));
		term(html, "Finished", time(job.finishedAt()));
		if (job.runTime() != null) {
			term(html, "Run time", escape(JobsSection.duration(job.runTime())));
		}
		if (progress != null && progress.percent() != null) {
			term(html, "Progress", "<progress max=\"100\" value=\"" + progress.percent() + "\">" + progress.percent()
					+ " %</progress> " + progress.percent() + " %"
					+ ((progress.message() != null) ? " – " + escape(UserTexts.message(progress.message(), viewer.showValues())) : "") + " (" + time(progress.reportedAt())
					+ ")");
		}
		if (progress != null && progress.cancelRequestedAt() != null) {
			term(html, "Cancel requested", time(progress.cancelRequestedAt()));
		}
		if (job.snoozes() > 0) {
			term(html, "Snoozes", Integer.toString(job.snoozes()));
		}
		if (!job.tags().isEmpty()) {
			term(html, "Tags", escape(String.join(", ", job.tags())));
		}
		if (job.concurrencyKey() != null) {
			term(html, "Concurrency key", escape(job.concurrencyKey()));
		}
		if (job.rateWeight() != null) {
			term(html, "Rate weight", Integer.toString(job.rateWeight()));
		}
		html.append("</dl>");
		actions(html, viewer, job);
		attempts(html, attempts, viewer.showValues());
		html.append("<h3>Last error</h3>");
		if (job.lastError() != null) {
			html.append("<pre class=\"error\">").append(escape(UserTexts.errorText(job.lastError(), viewer.showValues())))
				.append("</pre>");
		}
		else {
			html.append("<p>None.</p>");
		}
		html.append("</div></section>");
		return close(html);
	}

	/** The job's attempts, oldest first, as its history keeps them. */
	private void attempts(StringBuilder html, List<JobAttempt> attempts, boolean showValues) {
		html.append("<h3>Attempts</h3>");
		if (attempts.isEmpty()) {
			html.append("<p>None yet.</p>");
			return;
		}
		html.append("<table class=\"attempts\"><thead><tr><th>#</th><th>Started</th><th>Ended</th><th>Outcome</th>")
			.append("<th>Error</th></tr></thead><tbody>");
		for (JobAttempt attempt : attempts) {
			String outcome = attempt.outcome().name().toLowerCase(Locale.ROOT);
			String error = (attempt.error() != null) ? attempt.error() + ": " : "";
			html.append("<tr><td>").append(attempt.attempt()).append("</td><td>").append(time(attempt.startedAt()))
				.append("</td><td>").append(time(attempt.finishedAt())).append("</td><td><span class=\"state ")
				.append(outcome).append("\">").append(outcome).append("</span></td><td>")
				.append(escape(error + Objects.toString(UserTexts.message(attempt.message(), showValues), "")))
				.append("</td></tr>");
		}
		html.append("</tbody></table>");
	}

	/** Asks before an action on every job a search matches, stating how many it will touch. */
	String confirmBulk(Viewer viewer, JobQuery query, JobsSection.Action action, long matching) {
		StringBuilder html = new StringBuilder();
		open(html, viewer, action.label + " jobs");
		JobsSection.confirm(html, viewer, query, action, matching);
		return close(html);
	}

	String notFound(Viewer viewer, UUID id) {
		StringBuilder html = new StringBuilder();
		open(html, viewer, "No such job");
		html.append("<p class=\"notice\">There is no job ").append(id)
			.append(": it never existed, or it was deleted or pruned once finished.</p>");
		return close(html);
	}

	void open(StringBuilder html, Viewer viewer, String title) {
		long refresh = this.refreshInterval.toSeconds();
		html.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
			.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
			.append("<title>").append(escape(title)).append("</title>")
			.append("<link rel=\"stylesheet\" href=\"").append(escape(viewer.base())).append("/dashboard.css\">")
			.append("<script src=\"").append(escape(viewer.base())).append("/dashboard.js\" defer></script>");
		if (refresh > 0) {
			html.append("<noscript><meta http-equiv=\"refresh\" content=\"").append(refresh).append("\"></noscript>");
		}
		html.append("</head><body data-refresh=\"").append(Math.max(refresh, 0)).append("\"><header>")
			.append(link(viewer.base(), "pgqueue"))
			.append("<span class=\"viewer\">").append(escape(viewer.description())).append("</span>")
			.append("<span id=\"updated\" data-live>as of ").append(TIME.format(Instant.now())).append("</span>")
			.append("</header><main>");
	}

	static String close(StringBuilder html) {
		return html.append("</main></body></html>").toString();
	}

	private static void queueTable(StringBuilder html, Viewer viewer, List<QueueSummary> queues) {
		if (queues.isEmpty()) {
			html.append("<p>No queue has jobs, and none is polled here.</p>");
			return;
		}
		html.append("<table class=\"queues\"><thead><tr><th>Queue</th><th>Depth</th><th>Oldest waiting</th>")
			.append("<th>Scheduled</th><th>Running</th><th>Failed</th><th title=\"jobs completed or failed in the last minute, by every instance\">Finished, last min</th><th>Here</th>")
			.append("<th>Status</th><th></th></tr></thead><tbody>");
		for (QueueSummary queue : queues) {
			String name = escape(queue.queue());
			html.append("<tr data-queue=\"").append(name).append("\"><td>")
				.append(link(queueUrl(viewer, queue.queue()), queue.queue()))
				.append("</td><td class=\"depth\">").append(queue.available())
				.append("</td><td>").append((queue.oldestAge() != null) ? age(queue.oldestAge()) : "–")
				.append("</td><td>").append(queue.scheduled())
				.append("</td><td>").append(queue.running())
				.append("</td><td>").append(queue.failed())
				.append("</td><td>").append(finished(queue.finishedLastMinute()))
				.append("</td><td>").append(here(queue))
				.append("</td><td class=\"status\">").append(queue.paused() ? "paused" : "active")
				.append("</td><td>");
			if (viewer.mayWrite()) {
				String action = queue.paused() ? "resume" : "pause";
				button(html, viewer, viewer.base() + "/queues/" + encode(queue.queue()) + "/" + action,
						queue.paused() ? "Resume" : "Pause");
			}
			html.append("</td></tr>");
		}
		html.append("</tbody></table>");
	}

	/**
	 * The buttons for what can be done to the job in its state: retry a failed one, cancel a waiting
	 * or running one.
	 */
	static void actions(StringBuilder html, Viewer viewer, JobDetails job) {
		if (!viewer.mayWrite()) {
			return;
		}
		String url = viewer.base() + "/jobs/" + job.id();
		if (job.state() == JobState.FAILED) {
			button(html, viewer, url + "/retry", "Retry");
		}
		if (job.state() == JobState.AVAILABLE || job.state() == JobState.SCHEDULED
				|| job.state() == JobState.RUNNING) {
			button(html, viewer, url + "/cancel", "Cancel");
		}
	}

	static void button(StringBuilder html, Viewer viewer, String action, String label) {
		html.append("<form method=\"post\" class=\"action\" action=\"").append(escape(action)).append("\">");
		viewer.formFields()
			.forEach((name, value) -> html.append("<input type=\"hidden\" name=\"")
				.append(escape(name))
				.append("\" value=\"")
				.append(escape(value))
				.append("\">"));
		html.append("<button type=\"submit\" class=\"").append(label.toLowerCase(Locale.ROOT).replace(' ', '-'))
			.append("\">").append(label).append("</button></form>");
	}

	private static String notice(String did, AdminResult.Outcome outcome) {
		return switch (outcome) {
			case APPLIED -> did.equals("retry") ? "Retried: the job is available to run again."
					: "Cancelled: the job will not run.";
			case RUNNING -> "Not done: a worker has this job. Try again once it is finished.";
			case NOT_ALLOWED -> "Not done: the job is in a state where it cannot be "
					+ (did.equals("retry") ? "retried." : "cancelled.");
			case NOT_FOUND -> "Not done: there is no such job any more.";
			case CANCEL_REQUESTED -> "Cancel requested: the job is running, and the instance running it stops it "
					+ "within a second, unless it finishes first.";
		};
	}

	static String queueUrl(Viewer viewer, String queue) {
		return href(UriComponentsBuilder.fromPath(viewer.base()).queryParam("queue", queue));
	}

	private static String here(QueueSummary queue) {
		if (queue.mode() == null) {
			return "not polled";
		}
		String here = queue.mode() + ", " + queue.busyWorkers() + " of " + queue.concurrency() + " workers busy";
		RateUse rate = queue.rate();
		if (rate == null) {
			return here;
		}
		StringBuilder text = new StringBuilder(here);
		RateLimit limit = rate.limit();
		if (limit != null) {
			text.append("; rate limit: <span class=\"rate\">").append(rate.used()).append(" of ").append(limit.starts())
				.append("</span> started in the last ").append(period(limit.period()))
				.append(rate.heldFor().isZero() ? "" : ", claims held for " + age(rate.heldFor()));
		}
		for (KindRateUse kind : rate.kinds()) {
			text.append("; kind ").append(escape(kind.kind())).append(": <span class=\"rate\">").append(kind.used())
				.append(" of ").append(kind.limit().starts()).append("</span> units in the last ")
				.append(period(kind.limit().period()))
				.append(kind.heldFor().isZero() ? "" : ", held for " + age(kind.heldFor()));
		}
		RateLimit perKey = rate.perKey();
		if (perKey != null) {
			text.append("; per key: ").append(perKey.starts()).append(" per ").append(period(perKey.period()))
				.append(", <span class=\"rate\">").append(rate.keysHeld()).append("</span> keys at their limit");
		}
		return text.toString();
	}

	private static void term(StringBuilder html, String term, String definition) {
		html.append("<dt>").append(term).append("</dt><dd>").append(definition).append("</dd>");
	}

	static void option(StringBuilder html, String value, boolean selected) {
		html.append("<option value=\"").append(escape(value)).append('"').append(selected ? " selected" : "")
			.append('>').append(escape(value)).append("</option>");
	}

	static String link(String href, String text) {
		return "<a href=\"" + escape(href) + "\">" + escape(text) + "</a>";
	}

	static String time(@Nullable Instant instant) {
		return (instant != null) ? TIME.format(instant) : "–";
	}

	/** A limit's period as it would be written in application.yml: 500ms, 1s, 90s, 1m. */
	static String period(Duration period) {
		if (period.toSeconds() < 1 || period.toMillis() % 1000 != 0) {
			return period.toMillis() + "ms";
		}
		long seconds = period.toSeconds();
		return (seconds % 60 == 0) ? (seconds / 60) + "m" : seconds + "s";
	}

	static String age(Duration age) {
		long seconds = Math.max(age.toSeconds(), 0);
		if (seconds < 60) {
			return seconds + "s";
		}
		if (seconds < 3600) {
			return (seconds / 60) + "m " + (seconds % 60) + "s";
		}
		if (seconds < 86400) {
			return (seconds / 3600) + "h " + (seconds % 3600 / 60) + "m";
		}
		return (seconds / 86400) + "d " + (seconds % 86400 / 3600) + "h";
	}

	private static String finished(@Nullable Long lastMinute) {
		// Not counted where completed jobs are deleted as they finish: their rows are gone.
		return (lastMinute != null) ? String.valueOf(lastMinute)
				: "<span title=\"completed jobs are deleted as they finish (retention.completed: 0)\">–</span>";
	}

	/**
	 * The builder's URI, encoded, with a {@code +} in it encoded too: a literal {@code +} in a query
	 * is read back as a space, so an error text such as {@code a+b} would not survive a link.
	 */
	static String href(UriComponentsBuilder builder) {
		return builder.build().encode().toUriString().replace("+", "%2B");
	}

	/**
	 * A name as one path segment. A {@code ;} is encoded too, though a path segment may hold it: the
	 * server reads what follows a raw {@code ;} as the segment's parameters and drops it, so that an
	 * action on queue {@code mail;eu} would reach queue {@code mail}.
	 */
	static String encode(String segment) {
		return UriUtils.encodePathSegment(segment, StandardCharsets.UTF_8).replace(";", "%3B");
	}

	static String escape(String text) {
		return HtmlUtils.htmlEscape(text);
	}

}
