package dev.pgqueue.benchmark;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.CategorySeries.CategorySeriesRenderStyle;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Draws the report's PNG charts. */
final class Charts {

	private static final Pattern DRAIN_VARIANT = Pattern.compile("(\\w+) b=(\\d+) c=(\\d+)");

	private static final Color[] PALETTE = { new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
			new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b) };

	private static final BasicStroke DASHED = new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
			new float[] { 6f, 4f }, 0f);

	private Charts() {
	}

	/** Writes every chart the results allow; returns the files written. */
	static List<Path> write(Report report) throws IOException {
		System.setProperty("java.awt.headless", "true");
		List<Path> written = new ArrayList<>();
		CategoryChart ratios = ratios(report);
		if (ratios != null) {
			written.add(save(List.of(ratios), 1, 1, report.directory().resolve("ratios.png")));
		}
		List<XYChart> drain = drain(report);
		if (!drain.isEmpty()) {
			written.add(save(drain, 1, drain.size(), report.directory().resolve("drain.png")));
		}
		List<CategoryChart> latency = latency(report);
		if (!latency.isEmpty()) {
			written.add(save(latency, 1, latency.size(), report.directory().resolve("latency.png")));
		}
		return written;
	}

	private static <T extends Chart<?, ?>> Path save(List<T> charts, int rows, int columns, Path file)
			throws IOException {
		BitmapEncoder.saveBitmap(charts, rows, columns, file.toString(), BitmapFormat.PNG);
		return file;
	}

	/** pgqueue ÷ baseline for every throughput figure with a ratio target, beside the target. */
	private static CategoryChart ratios(Report report) {
		List<String> labels = new ArrayList<>();
		List<Double> ratios = new ArrayList<>();
		List<Double> targets = new ArrayList<>();
		for (Result result : report.results()) {
			if (result.target() != null && result.target().subject() == Target.Subject.RATIO
					&& Double.isFinite(result.ratio())) {
				labels.add(result.workload() + ": " + result.variant());
				ratios.add(result.ratio());
				targets.add(result.target().threshold());
			}
		}
		if (labels.isEmpty()) {
			return null;
		}
		CategoryChart chart = new CategoryChartBuilder().width(Math.max(900, 34 * labels.size() + 200))
			.height(720)
			.title("pgqueue ÷ baseline (same run, same database) — " + report.profile().name() + " profile")
			.yAxisTitle("ratio (1.0 = as fast as the baseline)")
			.build();
		chart.getStyler().setLegendPosition(LegendPosition.InsideNE);
		chart.getStyler().setXAxisLabelRotation(60);
		chart.getStyler().setOverlapped(true);
		chart.getStyler().setYAxisMin(0.0);
		double highest = ratios.stream().mapToDouble(Double::doubleValue).max().orElse(1.0);
		chart.getStyler().setYAxisMax(Math.ceil(Math.max(1.0, highest) * 10 + 0.5) / 10);
		chart.getStyler().setYAxisDecimalPattern("0.00");
		CategorySeries ratio = chart.addSeries("pgqueue ÷ baseline", labels, ratios);
		ratio.setFillColor(PALETTE[0]);
		CategorySeries target = chart.addSeries("target", labels, targets);
		target.setChartCategorySeriesRenderStyle(CategorySeriesRenderStyle.Scatter);
		target.setMarker(SeriesMarkers.DIAMOND);
		target.setMarkerColor(PALETTE[3]);
		return chart;
	}

	/** Drain throughput against concurrency, one panel per mode, pgqueue solid and raw dashed. */
	private static List<XYChart> drain(Report report) {
		List<XYChart> charts = new ArrayList<>();
		for (String mode : new String[] { "transactional", "leased" }) {
			// The optional fixed-batch rows (-Dpgqueue.bench.drain.fixed) are in the table, not the chart.
			List<Result> rows = report.of("drain")
				.stream()
				.filter((r) -> r.variant().startsWith(mode + " ") && !r.variant().contains(","))
				.toList();
			if (rows.isEmpty()) {
				continue;
			}
			XYChart chart = new XYChartBuilder().width(800)
				.height(600)
				.title("Drain, " + mode + " mode: no-op jobs/s")
				.xAxisTitle("concurrency")
				.yAxisTitle("jobs/s (log scale)")
				.build();
			chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
			// Batch sizes 1 and 500 differ a hundredfold: a log axis keeps both readable.
			chart.getStyler().setYAxisLogarithmic(true);
			double[] range = range(rows);
			chart.getStyler().setYAxisMin(range[0]);
			chart.getStyler().setYAxisMax(range[1]);
			chart.getStyler().setXAxisDecimalPattern("0");
			List<Integer> batchSizes = rows.stream().map((r) -> parse(r)[0]).distinct().sorted().toList();
			for (int b = 0; b < batchSizes.size(); b++) {
				int batchSize = batchSizes.get(b);
				List<Double> x = new ArrayList<>();
				List<Double> pgqueue = new ArrayList<>();
				List<Double> raw = new ArrayList<>();
				for (Result row : rows) {
					int[] parsed = parse(row);
					if (parsed[0] == batchSize) {
						x.add((double) parsed[1]);
						pgqueue.add(row.pgqueue());
						raw.add(row.baseline());
					}
				}
				Color color = PALETTE[b % PALETTE.length];
				XYSeries engine = chart.addSeries("pgqueue b=" + batchSize, x, pgqueue);
				engine.setLineColor(color);
				engine.setMarkerColor(color);
				engine.setMarker(SeriesMarkers.CIRCLE);
				XYSeries baseline = chart.addSeries("raw b=" + batchSize, x, raw);
				baseline.setLineColor(color);
				baseline.setMarkerColor(color);
				baseline.setMarker(SeriesMarkers.NONE);
				baseline.setLineStyle(DASHED);
			}
			charts.add(chart);
		}
		return charts;
	}

	/** Pickup latency (steady state) and claim latency (growth), pgqueue beside raw, log scale. */
	private static List<CategoryChart> latency(Report report) {
		List<CategoryChart> charts = new ArrayList<>();
		CategoryChart pickup = compare(report, "steady-state", "pickup p99",
				"Pickup latency p99 (enqueue commit → handler start)", true);
		if (pickup != null) {
			charts.add(pickup);
		}
		CategoryChart claim = compare(report, "growth", "claim p50", "Claim statement p50 by table contents", false);
		if (claim != null) {
			charts.add(claim);
		}
		return charts;
	}

	private static CategoryChart compare(Report report, String workload, String metric, String title, boolean log) {
		List<Result> rows = report.of(workload)
			.stream()
			.filter((r) -> r.metric().equals(metric) && Double.isFinite(r.pgqueue()) && Double.isFinite(r.baseline()))
			.toList();
		if (rows.isEmpty()) {
			return null;
		}
		CategoryChart chart = new CategoryChartBuilder().width(800)
			.height(560)
			.title(title)
			.yAxisTitle(rows.get(0).unit() + (log ? " (log scale)" : ""))
			.build();
		if (log) {
			chart.getStyler().setYAxisLogarithmic(true);
			double[] range = range(rows);
			chart.getStyler().setYAxisMin(range[0]);
			chart.getStyler().setYAxisMax(range[1]);
		}
		else {
			chart.getStyler().setYAxisMin(0.0);
		}
		chart.getStyler().setXAxisLabelRotation(30);
		chart.getStyler().setLegendPosition(LegendPosition.InsideNW);
		List<String> labels = rows.stream().map(Result::variant).toList();
		chart.addSeries("pgqueue", labels, rows.stream().map((r) -> Math.max(r.pgqueue(), 0.001)).toList())
			.setFillColor(PALETTE[0]);
		chart.addSeries("raw JDBC", labels, rows.stream().map((r) -> Math.max(r.baseline(), 0.001)).toList())
			.setFillColor(PALETTE[1]);
		return chart;
	}

	/**
	 * Whole powers of ten around every figure: bars on a log axis grow from its minimum, which must be
	 * above zero, and XChart's own maximum can cut the tallest bar.
	 */
	private static double[] range(List<Result> rows) {
		double smallest = rows.stream().mapToDouble((r) -> Math.min(r.pgqueue(), r.baseline())).min().orElse(1);
		double largest = rows.stream().mapToDouble((r) -> Math.max(r.pgqueue(), r.baseline())).max().orElse(10);
		return new double[] { Math.pow(10, Math.floor(Math.log10(Math.max(smallest, 0.001)))),
				Math.pow(10, Math.ceil(Math.log10(Math.max(largest, 0.001)) + 1e-9)) };
	}

	/** Batch size and concurrency of a drain variant. */
	private static int[] parse(Result row) {
		Matcher matcher = DRAIN_VARIANT.matcher(row.variant().toLowerCase(Locale.ROOT));
		if (!matcher.matches()) {
			throw new IllegalArgumentException("Not a drain variant: " + row.variant());
		}
		return new int[] { Integer.parseInt(matcher.group(2)), Integer.parseInt(matcher.group(3)) };
	}

}
