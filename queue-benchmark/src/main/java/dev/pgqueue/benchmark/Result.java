package dev.pgqueue.benchmark;

import java.util.Locale;

/**
 * One measured figure of pgqueue beside the same figure of its baseline, measured in the same run
 * on the same database.
 *
 * @param workload workload name, for example {@code drain}
 * @param variant what was varied, for example {@code transactional b=10 c=4}
 * @param metric what was measured, for example {@code throughput}
 * @param unit unit of both figures, for example {@code jobs/s}
 * @param pgqueue pgqueue's figure
 * @param baseline the baseline's figure
 * @param baselineName what the baseline is: {@code raw JDBC} (the same SQL in a tight loop), or
 * {@code ideal}
 * @param higherIsBetter whether a bigger figure is better (throughput) or worse (latency)
 * @param target the goal, or {@code null}
 */
public record Result(String workload, String variant, String metric, String unit, double pgqueue, double baseline,
		String baselineName, boolean higherIsBetter, Target target) {

	public static final String RAW = "raw JDBC";

	public static final String IDEAL = "ideal";

	/** A throughput-like figure against the raw baseline. */
	public static Result higher(String workload, String variant, String metric, String unit, double pgqueue,
			double raw, Target target) {
		return new Result(workload, variant, metric, unit, pgqueue, raw, RAW, true, target);
	}

	/** A latency-like figure against the raw baseline. */
	public static Result lower(String workload, String variant, String metric, String unit, double pgqueue,
			double raw, Target target) {
		return new Result(workload, variant, metric, unit, pgqueue, raw, RAW, false, target);
	}

	/** pgqueue ÷ baseline. */
	public double ratio() {
		return (this.baseline != 0) ? this.pgqueue / this.baseline : Double.NaN;
	}

	/** Whether the target is met, or {@code null} when there is none. */
	public Boolean met() {
		return (this.target != null) ? this.target.isMet(this) : null;
	}

	public String targetText() {
		return (this.target != null) ? this.target.describe(this.unit) : "";
	}

	/** A figure with precision that suits its size. */
	static String format(double value) {
		if (Double.isNaN(value)) {
			return "n/a";
		}
		double abs = Math.abs(value);
		if (abs >= 1000) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (abs >= 100) {
			return String.format(Locale.ROOT, "%.0f", value);
		}
		if (abs >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

}
