package dev.pgqueue;

/** Whether a recurring job's tick fires while the job of its previous tick is unfinished. */
public enum Overlap {

	/** Fires every tick, whatever became of the previous one's job (the default). */
	ALLOW,

	/** Skips a tick while the job of the schedule's previous tick is still waiting or running. */
	SKIP

}
