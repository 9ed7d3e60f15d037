package dev.pgqueue;

import java.time.Duration;
import java.util.UUID;

/**
 * A job whose transaction was prepared but neither committed nor rolled back: its worker died (or
 * lost its connection) between the prepare and the commit, before or after the job's
 * {@link ExternalEffect} ran. An {@link InDoubtJobResolver} says which.
 *
 * @param id public id of the job, the idempotency key its effect was given
 * @param kind kind of the job
 * @param queue queue of the job
 * @param attempt the attempt that was prepared
 * @param payload raw JSON payload
 * @param preparedFor how long the transaction has been prepared
 */
public record InDoubtJob(UUID id, String kind, String queue, int attempt, String payload, Duration preparedFor) {

	@Override
	public String toString() {
		// The payload stays out of logs and exception messages: it may hold personal data.
		return "InDoubtJob[id=" + this.id + ", kind=" + this.kind + ", queue=" + this.queue + ", attempt="
				+ this.attempt + ", preparedFor=" + this.preparedFor + "]";
	}

}
