package dev.pgqueue.autoconfigure;

import java.util.Locale;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What the {@code pgqueue} endpoint's write operations answer: what changed.
 */
public final class ActionDescriptors {

	private ActionDescriptors() {
	}

	/**
	 * A retry, cancel or delete of one job.
	 *
	 * @param id the job
	 * @param outcome {@code applied}, {@code not_found}, {@code running}, {@code not_allowed} or
	 * {@code cancel_requested}
	 * @param state the job's state after it
	 */
	public record JobActionDescriptor(UUID id, String outcome, @Nullable String state)
			implements OperationResponseBody {

		static JobActionDescriptor of(AdminResult result) {
			return new JobActionDescriptor(result.id(), result.outcome().name().toLowerCase(Locale.ROOT),
					(result.state() != null) ? result.state().sqlValue() : null);
		}

	}

	/**
	 * A retry or cancel of every job a filter matches.
	 *
	 * @param action {@code retry} or {@code cancel}
	 * @param changed how many jobs changed
	 */
	public record BulkActionDescriptor(String action, int changed) implements OperationResponseBody {
	}

	/**
	 * A pause or resume of a queue.
	 *
	 * @param queue the queue
	 * @param paused whether it is paused now
	 * @param changed whether that changed anything
	 */
	public record QueueActionDescriptor(String queue, boolean paused, boolean changed)
			implements OperationResponseBody {
	}

	/**
	 * A retry of every failed job of a queue or of a kind.
	 *
	 * @param queue the queue, when it was a queue's
	 * @param kind the kind, when it was a kind's
	 * @param retried how many jobs were retried
	 */
	public record RetriedDescriptor(@Nullable String queue, @Nullable String kind, int retried)
			implements OperationResponseBody {
	}

	/**
	 * A pause, resume, run or delete of a recurring job.
	 *
	 * @param schedule its name
	 * @param changed whether a pause or resume changed anything
	 * @param job the job a run enqueued
	 * @param paused whether it is paused now
	 * @param deleted whether a delete removed it
	 */
	public record ScheduleActionDescriptor(String schedule, @Nullable Boolean changed, @Nullable UUID job,
			@Nullable Boolean paused, @Nullable Boolean deleted) implements OperationResponseBody {
	}

}
