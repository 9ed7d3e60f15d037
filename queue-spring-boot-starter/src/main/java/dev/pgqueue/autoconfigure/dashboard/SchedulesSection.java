package dev.pgqueue.autoconfigure.dashboard;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.ScheduleNotice;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.ScheduleOutcome;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.Viewer;
import org.jspecify.annotations.Nullable;

import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.button;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.encode;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.escape;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.link;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.queueUrl;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.time;

/**
 * The overview's schedules: a row per recurring job (its cron and zone, next and last tick, state,
 * policies, where it was declared) with the buttons an operator who may write gets, and the notice
 * an action on a schedule leaves.
 */
final class SchedulesSection {

	private SchedulesSection() {
	}

	/** The schedules' table, with each one's buttons where the viewer may write. */
	static void table(StringBuilder html, Viewer viewer, List<ScheduleDetails> schedules) {
		html.append("<table class=\"schedules\"><thead><tr><th>Schedule</th><th>Cron</th><th>Kind</th>")
			.append("<th>Queue</th><th>Next tick</th><th>Last tick</th><th>State</th><th>Missed ticks</th>")
			.append("<th>Overlap</th><th>From</th><th></th></tr></thead><tbody>");
		for (ScheduleDetails schedule : schedules) {
			html.append("<tr data-schedule=\"").append(escape(schedule.name())).append("\"><td>")
				.append(escape(schedule.name()))
				.append("</td><td><code>").append(escape(schedule.cron())).append("</code> ")
				.append(escape(zone(schedule.zone())))
				.append("</td><td>").append(escape(schedule.kind()))
				.append("</td><td>").append(link(queueUrl(viewer, schedule.queue()), schedule.queue()))
				.append("</td><td class=\"next-tick\">").append(time(schedule.nextTick()))
				.append("</td><td class=\"last-tick\">").append(lastTick(viewer, schedule))
				.append("</td><td class=\"status\">").append(state(schedule))
				.append("</td><td>").append(schedule.missed().name().toLowerCase(Locale.ROOT))
				.append("</td><td>").append(schedule.overlap().name().toLowerCase(Locale.ROOT))
				.append("</td><td>").append(schedule.declared() ? "configuration" : "API")
				.append("</td><td>");
			actions(html, viewer, schedule);
			html.append("</td></tr>");
		}
		html.append("</tbody></table>");
	}

	/** UTC by name: a schedule saved with the default zone reads back as the offset {@code Z}. */
	private static String zone(ZoneId zone) {
		return ZoneOffset.UTC.equals(zone) ? "UTC" : zone.getId();
	}

	/** The last tick, and a link to the job it (or a later run-now) enqueued; a run-now may come before any tick. */
	private static String lastTick(Viewer viewer, ScheduleDetails schedule) {
		UUID job = schedule.lastJob();
		if (job == null) {
			return time(schedule.lastTick());
		}
		String link = link(viewer.base() + "/jobs/" + job, "job " + job.toString().substring(0, 8));
		return (schedule.lastTick() != null) ? time(schedule.lastTick()) + " " + link : link;
	}

	private static String state(ScheduleDetails schedule) {
		if (!schedule.paused()) {
			return "running";
		}
		String by = (schedule.pausedBy() != null) ? " by " + escape(schedule.pausedBy()) : "";
		return "paused" + by + " since " + time(schedule.pausedAt());
	}

	private static void actions(StringBuilder html, Viewer viewer, ScheduleDetails schedule) {
		if (!viewer.mayWrite()) {
			return;
		}
		String url = viewer.base() + "/schedules/" + encode(schedule.name());
		if (schedule.paused()) {
			button(html, viewer, url + "/resume", "Resume");
		}
		else {
			button(html, viewer, url + "/pause", "Pause");
		}
		button(html, viewer, url + "/run-now", "Run now");
		button(html, viewer, url + "/delete", "Delete");
	}

	/** What came of an action on a schedule, as the overview says it. */
	static String notice(Viewer viewer, ScheduleNotice notice) {
		String name = escape(notice.schedule());
		if (notice.outcome() == ScheduleOutcome.NOT_FOUND) {
			return "No schedule named " + name;
		}
		boolean done = notice.outcome() == ScheduleOutcome.DONE;
		return switch (notice.did()) {
			case "pause" -> done ? "Schedule " + name + " paused" : "Schedule " + name + " was paused already";
			case "resume" -> done ? "Schedule " + name + " resumed" : "Schedule " + name + " was not paused";
			case "run-now" -> "Ran schedule " + name + " now" + ranJob(viewer, notice.job());
			default -> "Schedule " + name + " deleted";
		};
	}

	private static String ranJob(Viewer viewer, @Nullable UUID job) {
		return (job != null) ? ": job " + link(viewer.base() + "/jobs/" + job, job.toString()) : "";
	}

}
