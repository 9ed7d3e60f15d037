package dev.pgqueue.autoconfigure.dashboard;

import java.util.List;
import java.util.Map;

import dev.pgqueue.JobState;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.ShardReading;
import dev.pgqueue.autoconfigure.dashboard.DashboardPages.Viewer;

import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.escape;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.link;
import static dev.pgqueue.autoconfigure.dashboard.DashboardPages.queueUrl;

/**
 * The overview's shards, where {@code pgqueue.shards} configures some: a row per queue of each shard
 * with its own jobs by state, beside whether the shard answers (and why not) and how many slots it owns.
 */
final class ShardsSection {

	private ShardsSection() {
	}

	/** The shards' table. */
	static void table(StringBuilder html, Viewer viewer, List<ShardReading> shards) {
		html.append("<table class=\"shards\"><thead><tr><th>Shard</th><th>Answers</th><th>Slots</th><th>Queue</th>")
			.append("<th>Depth</th><th>Scheduled</th><th>Running</th><th>Failed</th></tr></thead><tbody>");
		for (ShardReading shard : shards) {
			Map<String, Map<JobState, Long>> counts = shard.counts();
			int rows = (counts != null && !counts.isEmpty()) ? counts.size() : 1;
			String name = escape(shard.shard());
			String span = (rows > 1) ? " rowspan=\"" + rows + "\"" : "";
			html.append("<tr data-shard=\"").append(name).append("\"><td").append(span).append('>').append(name)
				.append("</td><td class=\"status\"").append(span).append('>')
				.append(shard.answers() ? "yes" : "no: " + escape(String.valueOf(shard.why())))
				.append("</td><td").append(span).append('>').append(shard.slots()).append("</td>");
			if (counts == null) {
				html.append("<td colspan=\"5\">not counted while it does not answer</td></tr>");
				continue;
			}
			if (counts.isEmpty()) {
				html.append("<td colspan=\"5\">no jobs</td></tr>");
				continue;
			}
			boolean first = true;
			for (Map.Entry<String, Map<JobState, Long>> queue : counts.entrySet()) {
				if (!first) {
					html.append("<tr data-shard=\"").append(name).append("\">");
				}
				first = false;
				Map<JobState, Long> states = queue.getValue();
				html.append("<td data-queue=\"").append(escape(queue.getKey())).append("\">")
					.append(link(queueUrl(viewer, queue.getKey()), queue.getKey()))
					.append("</td><td class=\"depth\">").append(states.getOrDefault(JobState.AVAILABLE, 0L))
					.append("</td><td>").append(states.getOrDefault(JobState.SCHEDULED, 0L))
					.append("</td><td>").append(states.getOrDefault(JobState.RUNNING, 0L))
					.append("</td><td>").append(states.getOrDefault(JobState.FAILED, 0L))
					.append("</td></tr>");
			}
		}
		html.append("</tbody></table>");
	}

	/**
	 * What a part of the overview that reads every shard says instead while some shard does not answer
	 * ({@code part} says what it needs every shard for); the Shards section still shows the others.
	 */
	static String unanswered(String part, ShardsPartlyFailedException ex) {
		List<String> failed = List.copyOf(ex.failures().keySet());
		String shards = (failed.size() == 1) ? "shard " + failed.get(0) + " does not answer"
				: "shards " + String.join(", ", failed) + " do not answer";
		return part + ", and " + shards + ": the Shards section shows what each other shard holds.";
	}

}
