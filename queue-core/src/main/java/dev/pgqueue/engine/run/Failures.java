package dev.pgqueue.engine.run;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;

import dev.pgqueue.Job;
import dev.pgqueue.NonRetryableJobException;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.run.JobTimeouts.TimeLimit;
import org.jspecify.annotations.Nullable;

/**
 * What a failed attempt comes to: a retry after the queue's delay, or a failure for good when the
 * exception is not worth another attempt or the attempt was the last; and the error text kept with
 * the job (the exception's class, message and first frames, bounded in size).
 */
final class Failures {

	/** Longest error text kept with a job. */
	static final int MAX_ERROR_LENGTH = 4000;

	private Failures() {
	}

	static Outcome failed(Job job, QueueSettings settings, Throwable failure) {
		return failed(job, settings, failure, "");
	}

	static Outcome failed(Job job, QueueSettings settings, Throwable failure, String prefix) {
		String error = bounded(prefix + describe(failure));
		if (!isRetryable(failure, settings)) {
			return Outcome.fail(error, failure);
		}
		if (job.isLastAttempt()) {
			return Outcome.fail("Attempt " + job.attempt() + " of " + job.maxAttempts() + " was the last: " + error,
					failure);
		}
		return Outcome.retry(settings.retry().delayAfter(job.attempt()), error, failure);
	}

	static String timeoutMessage(Job job, QueueMode mode, TimeLimit limit) {
		String effect = (mode == QueueMode.TRANSACTIONAL)
				? "its running statement was cancelled and its thread interrupted, and its database work is rolled back"
				: "its thread was interrupted and its worker moved on to other jobs (a listener that ignores the "
						+ "interruption keeps its thread until it returns, and whatever it returns then is discarded)";
		return "Job " + job.id() + " of kind '" + job.kind() + "' in queue '" + job.queue() + "' ran past its time limit "
				+ "of " + humanize(limit.duration()) + " (" + limit.setting() + ") on attempt " + job.attempt() + " of "
				+ job.maxAttempts() + "; " + effect + ". The stack trace shows where the listener was at the limit. "
				+ "Make the listener finish in time (check for interruption in long loops, give blocking calls "
				+ "timeouts of their own), or " + limit.howToRaise() + ".";
	}

	/** Whether another attempt could succeed after this failure. */
	static boolean isRetryable(Throwable failure, QueueSettings settings) {
		if (failure instanceof NonRetryableJobException || failure instanceof ClassCastException
				|| failure instanceof NoSuchMethodException) {
			return false;
		}
		for (Class<? extends Throwable> type : settings.nonRetryable()) {
			if (type.isInstance(failure)) {
				return false;
			}
		}
		return true;
	}

	static Throwable unwrap(Throwable thrown) {
		Throwable current = thrown;
		while ((current instanceof InvocationTargetException || current instanceof UndeclaredThrowableException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

	/** The exception's class, message and first frames, bounded in size. */
	static String describe(Throwable failure) {
		StringWriter text = new StringWriter();
		failure.printStackTrace(new PrintWriter(text));
		return bounded(text.toString());
	}

	static String bounded(String error) {
		return (error.length() <= MAX_ERROR_LENGTH) ? error : error.substring(0, MAX_ERROR_LENGTH - 1) + "…";
	}

	static @Nullable String summary(Outcome outcome) {
		Throwable cause = outcome.cause();
		return (cause != null) ? cause.getClass().getName() + ": " + cause.getMessage() : outcome.error();
	}

	static String humanize(Duration duration) {
		return duration.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
	}

}
