package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * Timings of the in-doubt resolver, which finishes the prepared transactions of queues with
 * two-phase commit that their workers left behind.
 *
 * @param resolveInterval how often this schema's prepared transactions are looked for (also the
 * freshness of their metrics); the first look is at start-up
 * @param inDoubtAfter how long a transaction must have been prepared, with its worker gone, before
 * the application is asked about it: keep it above the longest external effect, since a worker cut
 * off from the database may still be running one
 * @param rollBackAfter how long a transaction may stay prepared at most: one the application could
 * not decide (it has no listener for the job's kind, or its resolver kept failing) is rolled back
 * then, and its job runs again
 */
public record TwoPhaseSettings(Duration resolveInterval, Duration inDoubtAfter, Duration rollBackAfter) {

	public static final TwoPhaseSettings DEFAULT = new TwoPhaseSettings(Duration.ofSeconds(15), Duration.ofMinutes(1),
			Duration.ofHours(1));

	public TwoPhaseSettings {
		SettingRules.positive("pgqueue.two-phase-commit.resolve-interval", resolveInterval);
		SettingRules.positive("pgqueue.two-phase-commit.in-doubt-after", inDoubtAfter);
		SettingRules.positive("pgqueue.two-phase-commit.roll-back-after", rollBackAfter);
		if (rollBackAfter.compareTo(inDoubtAfter) <= 0) {
			throw new InvalidQueueConfigurationException("pgqueue.two-phase-commit.roll-back-after",
					"pgqueue.two-phase-commit.roll-back-after (" + rollBackAfter + ") must be longer than "
							+ "pgqueue.two-phase-commit.in-doubt-after (" + inDoubtAfter + ")",
					"Give the resolver time to ask the application first: set roll-back-after well above "
							+ "in-doubt-after, such as 1h against 1m.");
		}
	}

}
