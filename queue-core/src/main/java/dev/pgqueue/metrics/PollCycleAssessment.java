package dev.pgqueue.metrics;

import java.time.Duration;
import java.util.Locale;

/**
 * How a queue's claims are doing, judged by the 99th percentile of its recent poll cycles (the time
 * one claim statement takes). Claims with {@code SKIP LOCKED} do not fail when pollers contend: they
 * slow down, because each one walks past more rows that others hold before it finds its own. The
 * bands start at the lowest figure commonly reported for each state of such a queue and run up to
 * the next:
 *
 * <table>
 * <caption>Bands</caption>
 * <tr><th>assessment</th><th>p99 of the poll cycle</th><th>gauge value</th></tr>
 * <tr><td>healthy</td><td>below 30 ms</td><td>0</td></tr>
 * <tr><td>degrading</td><td>30 ms up to 100 ms</td><td>1</td></tr>
 * <tr><td>trouble</td><td>100 ms up to 500 ms</td><td>2</td></tr>
 * <tr><td>broken</td><td>500 ms and above</td><td>3</td></tr>
 * </table>
 */
public enum PollCycleAssessment {

	/** p99 below 30 ms: claims find their rows without walking far. */
	HEALTHY(Duration.ZERO),

	/** p99 from 30 ms: contention is building. */
	DEGRADING(Duration.ofMillis(30)),

	/** p99 from 100 ms: pollers spend much of each claim stepping over each other's rows. */
	TROUBLE(Duration.ofMillis(100)),

	/** p99 from 500 ms: claims cost more than most jobs. */
	BROKEN(Duration.ofMillis(500));

	private final Duration from;

	PollCycleAssessment(Duration from) {
		this.from = from;
	}

	/** The assessment of a poll-cycle p99. */
	public static PollCycleAssessment of(Duration p99) {
		PollCycleAssessment[] bands = values();
		for (int i = bands.length - 1; i > 0; i--) {
			if (p99.compareTo(bands[i].from) >= 0) {
				return bands[i];
			}
		}
		return HEALTHY;
	}

	/** Smallest p99 in this band. */
	public Duration from() {
		return this.from;
	}

	/** The value published by the {@code pgqueue.poll.cycle.assessment} gauge: 0 (healthy) to 3 (broken). */
	public int level() {
		return ordinal();
	}

	/** The name shown in health details: {@code healthy}, {@code degrading}, {@code trouble}, {@code broken}. */
	public String label() {
		return name().toLowerCase(Locale.ROOT);
	}

}
