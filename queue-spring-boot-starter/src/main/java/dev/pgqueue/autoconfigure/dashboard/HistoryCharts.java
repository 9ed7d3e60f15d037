package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import dev.pgqueue.QueueHistory;
import dev.pgqueue.QueueHistory.Point;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.Viewer;
import org.jspecify.annotations.Nullable;

import org.springframework.web.util.HtmlUtils;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Writes the overview's history section: for each queue three small line charts as inline SVG
 * (attempts completed and failed per step, mean and longest wait, mean and longest run time) over a
 * window the user picks among {@link #WINDOWS}, with the newest values as text. No script draws them:
 * the server writes the lines, so the charts need nothing but the page, and a reload of the page's
 * live parts redraws them.
 */
final class HistoryCharts {

	/** The windows a user can pick, in hours; the first one the page links to is the default. */
	static final List<Integer> WINDOWS = List.of(1, 6, 24);

	/** The window shown unless the page asks for another. */
	static final int DEFAULT_HOURS = 6;

	private static final int WIDTH = 260;

	private static final int HEIGHT = 96;

	private static final int LEFT = 44;

	private static final int RIGHT = WIDTH - 6;

	private static final int TOP = 8;

	private static final int BOTTOM = HEIGHT - 18;

	/**
	 * What the section shows: the window, and each queue's history over it, or why there is none.
	 * @param histories the queues' histories; empty when none was read
	 * @param problem why the history could not be read, or {@code null}
	 */
	record View(int hours, List<QueueHistory> histories, @Nullable String problem) {

		View {
			histories = List.copyOf(histories);
		}

	}

	/** The window a page asked for: one of {@link #WINDOWS}, else the default. */
	static int hours(@Nullable Integer asked) {
		return (asked != null && WINDOWS.contains(asked)) ? asked : DEFAULT_HOURS;
	}

	/**
	 * Appends the section: the window links, then one block of three charts per queue, in the order of
	 * {@code queues} and then any other queue that has history.
	 */
	void append(StringBuilder html, Viewer viewer, List<String> queues, View view) {
		html.append("<section><h2>History</h2><nav class=\"windows\" aria-label=\"History window\">");
		for (int hours : WINDOWS) {
			if (hours == view.hours()) {
				html.append("<strong aria-current=\"true\">").append(hours).append(" h</strong>");
			}
			else {
				String url = DashboardPages.href(UriComponentsBuilder.fromPath(viewer.base()).queryParam("hours", hours));
				html.append("<a href=\"").append(escape(url)).append("\">").append(hours).append(" h</a>");
			}
		}
		html.append("</nav><div id=\"history\" data-live>");
		if (view.problem() != null) {
			html.append("<p>").append(escape(view.problem())).append("</p></div></section>");
			return;
		}
		Map<String, @Nullable QueueHistory> byQueue = new LinkedHashMap<>();
		queues.forEach((queue) -> byQueue.put(queue, null));
		view.histories().forEach((history) -> byQueue.put(history.queue(), history));
		if (byQueue.isEmpty()) {
			html.append("<p>No queue yet.</p>");
		}
		int index = 0;
		for (Map.Entry<String, @Nullable QueueHistory> entry : byQueue.entrySet()) {
			queue(html, entry.getKey(), entry.getValue(), view.hours(), index++);
		}
		html.append("</div></section>");
	}

	private static void queue(StringBuilder html, String queue, @Nullable QueueHistory history, int hours, int index) {
		html.append("<div class=\"history\" data-queue=\"").append(escape(queue)).append("\"><h3>")
			.append(escape(queue)).append("</h3>");
		Point latest = (history != null) ? history.latest() : null;
		if (history == null || latest == null) {
			html.append("<p>No attempt ended in the last ").append(hours).append(" h.</p></div>");
			return;
		}
		String per = "per " + history.step().toMinutes() + " min";
		List<Point> points = history.points();
		chart(html, "h" + index + "-throughput", "Attempts of queue " + queue + " " + per + ", last " + hours + " h",
				hours, points, false,
				List.of(new Series("completed", "completed", Point::completed),
						new Series("failed", "failed", Point::failed)),
				"Latest: " + latest.completed() + " completed, " + latest.failed() + " failed, " + latest.retried()
						+ " retried " + per);
		chart(html, "h" + index + "-wait", "Wait from run-at to claim in queue " + queue + ", last " + hours + " h",
				hours, points, true,
				List.of(new Series("mean", "mean", (point) -> point.meanWait().toNanos()),
						new Series("max", "longest", (point) -> point.maxWait().toNanos())),
				"Latest: mean " + duration(latest.meanWait()) + ", longest " + duration(latest.maxWait()));
		chart(html, "h" + index + "-run", "Run time of attempts in queue " + queue + ", last " + hours + " h", hours,
				points, true,
				List.of(new Series("mean", "mean", (point) -> point.meanRun().toNanos()),
						new Series("max", "longest", (point) -> point.maxRun().toNanos())),
				"Latest: mean " + duration(latest.meanRun()) + ", longest " + duration(latest.maxRun()));
		html.append("</div>");
	}

	/** One line of a chart: its CSS class, its name in the legend, its value at each point. */
	private record Series(String css, String name, ToDoubleFunction<Point> value) {
	}

	/**
	 * A chart of the series over the points, with the y axis from zero to the largest value (labelled in
	 * the unit that suits it) and the x axis from the window's start to now.
	 * @param nanos whether the values are durations in nanoseconds, else counts
	 */
	private static void chart(StringBuilder html, String id, String title, int hours, List<Point> points,
			boolean nanos, List<Series> series, String latest) {
		double max = 0;
		for (Series line : series) {
			for (Point point : points) {
				max = Math.max(max, line.value().applyAsDouble(point));
			}
		}
		String top = nanos ? duration(Duration.ofNanos(Math.round(max))) : number(max);
		html.append("<figure class=\"chart\"><svg role=\"img\" aria-labelledby=\"").append(id).append("-title ")
			.append(id).append("-desc\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
			.append("\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT).append("\"><title id=\"")
			.append(id).append("-title\">").append(escape(title)).append("</title><desc id=\"").append(id)
			.append("-desc\">").append(escape(latest)).append("</desc>");
		html.append("<line class=\"axis\" x1=\"").append(LEFT).append("\" y1=\"").append(BOTTOM).append("\" x2=\"")
			.append(RIGHT).append("\" y2=\"").append(BOTTOM).append("\"/><line class=\"axis\" x1=\"").append(LEFT)
			.append("\" y1=\"").append(TOP).append("\" x2=\"").append(LEFT).append("\" y2=\"").append(BOTTOM)
			.append("\"/>");
		label(html, LEFT - 4, TOP + 8, "end", top);
		label(html, LEFT - 4, BOTTOM, "end", "0");
		label(html, LEFT, HEIGHT - 4, "start", hours + " h ago");
		label(html, RIGHT, HEIGHT - 4, "end", "now");
		for (Series line : series) {
			html.append("<polyline class=\"").append(line.css()).append("\" points=\"");
			for (int i = 0; i < points.size(); i++) {
				double x = (points.size() == 1) ? RIGHT : LEFT + (RIGHT - LEFT) * (double) i / (points.size() - 1);
				double value = line.value().applyAsDouble(points.get(i));
				double y = (max > 0) ? BOTTOM - (BOTTOM - TOP) * value / max : BOTTOM;
				html.append(coordinate(x)).append(',').append(coordinate(y)).append(' ');
			}
			html.append("\"/>");
		}
		html.append("</svg><figcaption>");
		List<String> legend = new ArrayList<>();
		series.forEach((line) -> legend.add("<span class=\"key " + line.css() + "\">" + escape(line.name()) + "</span>"));
		html.append(String.join(" ", legend)).append("<br>").append(escape(latest)).append("</figcaption></figure>");
	}

	private static void label(StringBuilder html, int x, int y, String anchor, String text) {
		html.append("<text x=\"").append(x).append("\" y=\"").append(y).append("\" text-anchor=\"").append(anchor)
			.append("\">").append(escape(text)).append("</text>");
	}

	private static String coordinate(double value) {
		return String.format(Locale.ROOT, "%.1f", value);
	}

	private static String number(double value) {
		return (value == Math.rint(value)) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.1f", value);
	}

	/** A duration in the unit that suits it: ms below a second, s below two minutes, else min. */
	static String duration(Duration duration) {
		long millis = duration.toMillis();
		if (millis < 1000) {
			return (duration.isZero() || millis > 0) ? millis + " ms"
					: String.format(Locale.ROOT, "%.2f ms", duration.toNanos() / 1e6);
		}
		if (millis < 120_000) {
			return String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
		}
		if (millis % 60_000 == 0 && millis < 86_400_000) {
			return (millis / 60_000) + " min";
		}
		return String.format(Locale.ROOT, "%.1f min", millis / 60_000.0);
	}

	private static String escape(String text) {
		return HtmlUtils.htmlEscape(text);
	}

}
