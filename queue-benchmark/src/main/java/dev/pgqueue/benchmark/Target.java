package dev.pgqueue.benchmark;

import java.util.Locale;

/**
 * A goal a result is judged against: either the ratio pgqueue ÷ baseline or pgqueue's own figure,
 * at least or at most a threshold.
 *
 * @param subject what is compared
 * @param atLeast whether the figure must reach the threshold (otherwise stay under it)
 * @param threshold the bound
 */
public record Target(Subject subject, boolean atLeast, double threshold) {

	/** The ratio to the baseline must be at least {@code threshold}. */
	public static Target ratioAtLeast(double threshold) {
		return new Target(Subject.RATIO, true, threshold);
	}

	/** pgqueue's figure must be at least {@code threshold} (in the result's unit). */
	public static Target valueAtLeast(double threshold) {
		return new Target(Subject.VALUE, true, threshold);
	}

	/** pgqueue's figure must be at most {@code threshold} (in the result's unit). */
	public static Target valueAtMost(double threshold) {
		return new Target(Subject.VALUE, false, threshold);
	}

	public boolean isMet(Result result) {
		double figure = (this.subject == Subject.RATIO) ? result.ratio() : result.pgqueue();
		return this.atLeast ? figure >= this.threshold : figure <= this.threshold;
	}

	/** How far off the target is, as a factor (1.0 when met exactly; above 1 when missed). */
	public double shortfall(Result result) {
		double figure = (this.subject == Subject.RATIO) ? result.ratio() : result.pgqueue();
		return this.atLeast ? this.threshold / figure : figure / this.threshold;
	}

	public String describe(String unit) {
		String bound = this.atLeast ? "≥ " : "≤ ";
		if (this.subject == Subject.RATIO) {
			return bound + String.format(Locale.ROOT, "%.0f %%", this.threshold * 100);
		}
		return bound + Result.format(this.threshold) + " " + unit;
	}

	/** What a target compares. */
	public enum Subject {

		/** pgqueue ÷ baseline. */
		RATIO,

		/** pgqueue's own figure. */
		VALUE

	}

}
