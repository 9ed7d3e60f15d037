package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.TwoPhaseSettings;

/**
 * The in-doubt resolver of queues with two-phase commit, which finishes the prepared
 * transactions of workers that died between prepare and commit.
 */
public class QueueTwoPhaseCommitProperties {

	/**
	 * How often this schema's prepared transactions are looked for, and their metrics read. The
	 * first look is at start-up.
	 */
	private Duration resolveInterval = TwoPhaseSettings.DEFAULT.resolveInterval();

	/**
	 * How long a transaction must have been prepared, with its worker gone, before the
	 * InDoubtJobResolver is asked whether its effect happened. Keep it above the longest
	 * external effect: a worker cut off from the database may still be running one.
	 */
	private Duration inDoubtAfter = TwoPhaseSettings.DEFAULT.inDoubtAfter();

	/**
	 * Longest time a transaction stays prepared. One that could not be decided by then (no
	 * listener for its kind here, or a resolver that kept failing) is rolled back and its job
	 * runs again.
	 */
	private Duration rollBackAfter = TwoPhaseSettings.DEFAULT.rollBackAfter();

	/** The in-doubt resolver's settings, validated. */
	TwoPhaseSettings toTwoPhaseSettings() {
		return new TwoPhaseSettings(this.resolveInterval, this.inDoubtAfter, this.rollBackAfter);
	}

	public Duration getResolveInterval() {
		return this.resolveInterval;
	}

	public void setResolveInterval(Duration resolveInterval) {
		this.resolveInterval = resolveInterval;
	}

	public Duration getInDoubtAfter() {
		return this.inDoubtAfter;
	}

	public void setInDoubtAfter(Duration inDoubtAfter) {
		this.inDoubtAfter = inDoubtAfter;
	}

	public Duration getRollBackAfter() {
		return this.rollBackAfter;
	}

	public void setRollBackAfter(Duration rollBackAfter) {
		this.rollBackAfter = rollBackAfter;
	}

}
