package dev.pgqueue;

/**
 * What a recurring job does with the ticks that fell due while no instance ran it (or while it was
 * paused): ticks later than the schedule's grace when they are found. A tick found within the grace
 * is on time and fires under every policy.
 */
public enum MissedTicks {

	/** Runs the newest missed tick once and skips the older ones (the default). */
	LATEST,

	/** Runs every missed tick, oldest first, up to a bound per pass of the ticker (the rest follow). */
	ALL,

	/** Skips the missed ticks: the schedule goes on with its next tick. */
	NONE

}
