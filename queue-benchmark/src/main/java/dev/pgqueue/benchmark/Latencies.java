package dev.pgqueue.benchmark;

import java.util.Arrays;

/** Durations in nanoseconds, collected from many threads, read as percentiles in milliseconds. */
final class Latencies {

	private long[] samples = new long[1024];

	private int size;

	synchronized void add(long nanos) {
		if (this.size == this.samples.length) {
			this.samples = Arrays.copyOf(this.samples, this.size * 2);
		}
		this.samples[this.size++] = nanos;
	}

	synchronized int size() {
		return this.size;
	}

	/** The {@code p}-th percentile (0–100) in milliseconds, skipping the first {@code skip} samples. */
	synchronized double percentileMillis(double p, int skip) {
		int from = Math.min(skip, this.size);
		long[] sorted = Arrays.copyOfRange(this.samples, from, this.size);
		if (sorted.length == 0) {
			return Double.NaN;
		}
		Arrays.sort(sorted);
		int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1e6;
	}

	double percentileMillis(double p) {
		return percentileMillis(p, 0);
	}

}
