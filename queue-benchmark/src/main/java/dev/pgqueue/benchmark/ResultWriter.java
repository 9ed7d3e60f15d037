package dev.pgqueue.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Writes a report as a table (Markdown, readable in a terminal), CSV and JSON. */
final class ResultWriter {

	private static final String[] HEADERS = { "Workload", "Variant", "Metric", "pgqueue", "Baseline", "Ratio",
			"Target", "Met" };

	private ResultWriter() {
	}

	/** The results as a Markdown table with aligned columns. */
	static String table(List<Result> results) {
		List<String[]> rows = new ArrayList<>();
		rows.add(HEADERS);
		for (Result result : results) {
			Boolean met = result.met();
			rows.add(new String[] { result.workload(), result.variant(), result.metric(),
					Result.format(result.pgqueue()) + " " + result.unit(),
					Result.format(result.baseline()) + " (" + result.baselineName() + ")",
					String.format(Locale.ROOT, "%.2f", result.ratio()), result.targetText(),
					(met == null) ? "" : (met ? "yes" : "**no**") });
		}
		int[] widths = new int[HEADERS.length];
		for (String[] row : rows) {
			for (int i = 0; i < row.length; i++) {
				widths[i] = Math.max(widths[i], row[i].length());
			}
		}
		StringBuilder table = new StringBuilder();
		for (int r = 0; r < rows.size(); r++) {
			appendRow(table, rows.get(r), widths);
			if (r == 0) {
				String[] rule = new String[widths.length];
				for (int i = 0; i < widths.length; i++) {
					rule[i] = "-".repeat(widths[i]);
				}
				appendRow(table, rule, widths);
			}
		}
		return table.toString();
	}

	private static void appendRow(StringBuilder table, String[] cells, int[] widths) {
		table.append('|');
		for (int i = 0; i < cells.length; i++) {
			table.append(' ').append(pad(cells[i], widths[i])).append(" |");
		}
		table.append('\n');
	}

	private static String pad(String cell, int width) {
		return cell + " ".repeat(width - cell.length());
	}

	static void write(Report report) throws IOException {
		Path directory = report.directory();
		Files.createDirectories(directory);
		Files.writeString(directory.resolve("table.md"), table(report.results()));
		Files.writeString(directory.resolve("results.csv"), csv(report.results()));
		Map<String, Object> json = new LinkedHashMap<>();
		json.put("profile", report.profile().name());
		json.put("startedAt", report.startedAt().toString());
		json.put("tookSeconds", report.took().toSeconds());
		json.put("environment", report.environment());
		json.put("failures", report.failures());
		List<Map<String, Object>> results = new ArrayList<>();
		for (Result result : report.results()) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("workload", result.workload());
			row.put("variant", result.variant());
			row.put("metric", result.metric());
			row.put("unit", result.unit());
			row.put("pgqueue", finite(result.pgqueue()));
			row.put("baseline", finite(result.baseline()));
			row.put("baselineName", result.baselineName());
			row.put("ratio", finite(result.ratio()));
			row.put("higherIsBetter", result.higherIsBetter());
			row.put("target", (result.target() != null) ? result.targetText() : null);
			row.put("met", result.met());
			results.add(row);
		}
		json.put("results", results);
		JsonMapper mapper = JsonMapper.builder().build();
		Files.writeString(directory.resolve("results.json"), mapper.writerWithDefaultPrettyPrinter()
			.writeValueAsString(json));
	}

	/** Reads the results back from a run's results.json, to redraw its charts. */
	static Report read(Path directory) throws IOException {
		JsonNode root = JsonMapper.builder().build().readTree(Files.readString(directory.resolve("results.json")));
		List<Result> results = new ArrayList<>();
		for (JsonNode row : root.get("results")) {
			String target = row.path("target").isNull() ? null : row.path("target").asString();
			results.add(new Result(row.get("workload").asString(), row.get("variant").asString(),
					row.get("metric").asString(), row.get("unit").asString(), number(row.get("pgqueue")),
					number(row.get("baseline")), row.get("baselineName").asString(),
					row.get("higherIsBetter").asBoolean(), parseTarget(target)));
		}
		return new Report(Profile.named(root.get("profile").asString()), java.time.Instant.parse(root.get("startedAt").asString()),
				java.time.Duration.ofSeconds(root.get("tookSeconds").asLong()), Map.of(), results, Map.of(), directory);
	}

	private static double number(JsonNode node) {
		return (node == null || node.isNull()) ? Double.NaN : node.asDouble();
	}

	/** The inverse of {@link Target#describe}: "≥ 50 %" or "≤ 10.0 ms". */
	private static Target parseTarget(String text) {
		if (text == null || text.isBlank()) {
			return null;
		}
		boolean atLeast = text.startsWith("≥");
		String[] parts = text.substring(1).trim().split("\\s+");
		double threshold = Double.parseDouble(parts[0].replace(",", ""));
		if (parts.length > 1 && parts[1].equals("%")) {
			return new Target(Target.Subject.RATIO, atLeast, threshold / 100);
		}
		return new Target(Target.Subject.VALUE, atLeast, threshold);
	}

	private static Double finite(double value) {
		return Double.isFinite(value) ? value : null;
	}

	static String csv(List<Result> results) {
		StringBuilder csv = new StringBuilder(
				"workload,variant,metric,unit,pgqueue,baseline,baseline_name,ratio,target,met\n");
		for (Result result : results) {
			Boolean met = result.met();
			csv.append(String.join(",", quote(result.workload()), quote(result.variant()), quote(result.metric()),
					quote(result.unit()), number(result.pgqueue()), number(result.baseline()),
					quote(result.baselineName()), number(result.ratio()), quote(result.targetText()),
					(met == null) ? "" : met.toString()))
				.append('\n');
		}
		return csv.toString();
	}

	private static String number(double value) {
		return Double.isFinite(value) ? String.format(Locale.ROOT, "%.6g", value) : "";
	}

	private static String quote(String value) {
		return "\"" + value.replace("\"", "\"\"") + "\"";
	}

}
