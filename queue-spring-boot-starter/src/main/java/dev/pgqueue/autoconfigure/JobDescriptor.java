package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobProgress;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * One job as the {@code pgqueue} endpoint shows it: in a list, its row; on its own
 * ({@code GET /actuator/pgqueue/jobs/{id}}), also its attempts, its progress while it runs and, when
 * asked for, its payload and output. Those two, the messages of its errors and the message of its
 * progress are user data: shown as they are only where {@code management.endpoint.pgqueue.show-values}
 * allows it, else as {@value UserTexts#HIDDEN} (an error keeps its exceptions' classes and frames,
 * see {@link UserTexts#errorText}).
 *
 * @param id the public id {@code JobClient} returned at enqueue
 * @param kind the job's kind
 * @param queue the job's queue
 * @param state its state, as stored ({@code available}, {@code running}, …)
 * @param priority its priority
 * @param attempt the attempts it has used
 * @param maxAttempts the attempts it may use
 * @param lastError the error its last failed attempt recorded
 * @param createdAt when it was enqueued
 * @param runAt when it is (or was) due
 * @param startedAt when its last attempt started
 * @param finishedAt when it finished
 * @param runTime how long its last attempt ran, once finished
 * @param snoozes how often it snoozed
 * @param tags its tags
 * @param concurrencyKey its concurrency key, if it has one
 * @param rateWeight its own rate weight, if it was enqueued with one (else its kind's applies)
 * @param payload its payload, only when asked for
 * @param attempts its attempt history, only for one job
 * @param progress the progress its running attempt reported, only for one job
 * @param output the output its listener returned, only when asked for
 */
public record JobDescriptor(UUID id, String kind, String queue, String state, int priority, int attempt,
		int maxAttempts, @Nullable String lastError, Instant createdAt, Instant runAt, @Nullable Instant startedAt,
		@Nullable Instant finishedAt, @Nullable Duration runTime, int snoozes, List<String> tags,
		@Nullable String concurrencyKey, @Nullable Integer rateWeight, @Nullable String payload, @Nullable List<AttemptDescriptor> attempts, @Nullable ProgressDescriptor progress,
		@Nullable String output) implements OperationResponseBody {

	/** What a value shows when {@code show-values} hides it, as Spring Boot's own endpoints show it. */
	public static final String HIDDEN = UserTexts.HIDDEN;

	/**
	 * A job in a list: its row, without payload.
	 * @param showValues whether its error's messages are shown as they are
	 */
	static JobDescriptor of(JobDetails job, boolean showValues) {
		return of(job, null, null, null, null, showValues);
	}

	/**
	 * @param showValues whether its error's messages are shown as they are (the payload and output are
	 * given as they are to be shown)
	 */
	static JobDescriptor of(JobDetails job, @Nullable String payload, @Nullable List<AttemptDescriptor> attempts,
			@Nullable ProgressDescriptor progress, @Nullable String output, boolean showValues) {
		return new JobDescriptor(job.id(), job.kind(), job.queue(), job.state().sqlValue(), job.priority(),
				job.attempt(), job.maxAttempts(), UserTexts.errorText(job.lastError(), showValues), job.createdAt(),
				job.runAt(), job.startedAt(),
				job.finishedAt(), job.runTime(), job.snoozes(), job.tags(), job.concurrencyKey(), job.rateWeight(), payload,
				attempts, progress, output);
	}

	/**
	 * One attempt of a job.
	 *
	 * @param attempt its number, from 1
	 * @param startedAt when it started
	 * @param finishedAt when it ended
	 * @param outcome how it ended ({@code completed}, {@code failed}, …)
	 * @param error the class of the exception it failed with
	 * @param message that exception's message
	 */
	public record AttemptDescriptor(int attempt, @Nullable Instant startedAt, @Nullable Instant finishedAt,
			String outcome, @Nullable String error, @Nullable String message) {

		/** @param showValues whether the exception's message is shown as it is */
		static AttemptDescriptor of(JobAttempt attempt, boolean showValues) {
			return new AttemptDescriptor(attempt.attempt(), attempt.startedAt(), attempt.finishedAt(),
					attempt.outcome().name().toLowerCase(Locale.ROOT), attempt.error(),
					UserTexts.message(attempt.message(), showValues));
		}

	}

	/**
	 * The progress a running job reported.
	 *
	 * @param percent how far it is
	 * @param message what it is doing
	 * @param reportedAt when it said so
	 * @param cancelRequestedAt when an operator asked it to stop
	 */
	public record ProgressDescriptor(@Nullable Integer percent, @Nullable String message,
			@Nullable Instant reportedAt, @Nullable Instant cancelRequestedAt) {

		/** @param showValues whether the listener's message is shown as it is */
		static ProgressDescriptor of(JobProgress progress, boolean showValues) {
			return new ProgressDescriptor(progress.percent(), UserTexts.message(progress.message(), showValues),
					progress.reportedAt(), progress.cancelRequestedAt());
		}

	}

}
