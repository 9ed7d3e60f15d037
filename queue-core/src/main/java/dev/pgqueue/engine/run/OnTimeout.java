package dev.pgqueue.engine.run;

/**
 * What a mode does when an attempt runs past its time limit, on the watchdog thread, before the
 * attempt's thread learns of it.
 */
@FunctionalInterface
public interface OnTimeout {

	/** Interrupts the attempt's thread: enough where the thread may stay with its handler. */
	OnTimeout INTERRUPT = (attempt, thread) -> thread.interrupt();

	/**
	 * @param attempt the timed-out attempt, its outcome decided
	 * @param thread the thread running the handler
	 */
	void timedOut(Attempt attempt, Thread thread);

}
