package dev.pgqueue;

import java.time.Duration;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A step in a job's life, published to the application once it stands: in a Spring Boot
 * application as an application event, for {@code @EventListener} methods (or
 * {@code @TransactionalEventListener}s, which see none of pgqueue's own transactions):
 *
 * <pre>{@code
 * @EventListener
 * void onFailure(JobEvent.Failed failed) {
 *     alerts.send(failed.kind() + " failed for good: " + failed.error());
 * }
 * }</pre>
 *
 * <p>When each is published:
 * <ul>
 * <li>{@link Enqueued} once the enqueue's transaction commits (at once outside one); never for an
 * enqueue that rolls back, nor for a unique job that was already there.
 * <li>{@link Started} as an attempt begins, on the worker's thread. In a transactional queue this is
 * not a committed state: a job whose neighbour failed runs again in the same batch and starts twice.
 * <li>{@link Succeeded}, {@link Retried}, {@link Failed} and {@link Snoozed} once the attempt's outcome
 * is written: after the batch commits (transactional queues), after the completer wrote it (leased
 * queues). A job a careful run repeated is published once.
 * <li>{@link Cancelled} once the cancel commits.
 * </ul>
 *
 * <p>Listeners run on pgqueue's threads, one event at a time: a slow one slows the queue, so hand
 * long work to {@code @Async}. An exception a listener throws is logged and changes nothing. Events
 * carry no payload, and are not durable: a crash between the commit and the publication loses them
 * (the job's state in the table is the truth).
 */
public sealed interface JobEvent {

	/** The job's public id. */
	UUID id();

	/** The job's kind. */
	String kind();

	/** The job's queue. */
	String queue();

	/** The job was enqueued and its enqueue committed. */
	record Enqueued(UUID id, String kind, String queue) implements JobEvent {
	}

	/** An attempt of the job began. */
	record Started(UUID id, String kind, String queue, int attempt) implements JobEvent {
	}

	/**
	 * The job completed.
	 * @param runTime how long its listener ran
	 */
	record Succeeded(UUID id, String kind, String queue, int attempt, Duration runTime) implements JobEvent {
	}

	/**
	 * An attempt failed, and the job runs again after {@code delay}.
	 * @param error what the attempt failed with (class, message and first frames), bounded
	 */
	record Retried(UUID id, String kind, String queue, int attempt, @Nullable String error, Duration delay)
			implements JobEvent {
	}

	/**
	 * The job failed for good.
	 * @param error what its last attempt failed with, bounded
	 */
	record Failed(UUID id, String kind, String queue, int attempt, @Nullable String error) implements JobEvent {
	}

	/** The listener snoozed the job; it runs again after {@code delay}, without having used an attempt. */
	record Snoozed(UUID id, String kind, String queue, int attempt, Duration delay) implements JobEvent {
	}

	/** The job was cancelled. */
	record Cancelled(UUID id, String kind, String queue) implements JobEvent {
	}

}
