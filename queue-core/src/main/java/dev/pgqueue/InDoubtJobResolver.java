package dev.pgqueue;

/**
 * Decides the fate of a job left prepared by a worker that died between {@code PREPARE TRANSACTION}
 * and {@code COMMIT PREPARED}: an application with a queue that uses two-phase commit defines one
 * bean of this type, which asks the other system whether the job's {@link ExternalEffect} happened
 * (by the job's id, its idempotency key).
 *
 * <p>pgqueue commits the prepared transaction when the answer is {@code true} (the job completes
 * with its listener's database work) and rolls it back when it is {@code false} (the job runs again,
 * the interrupted attempt not counted). An exception means "cannot tell yet": the transaction stays
 * prepared and is asked about again at the next round, until
 * {@code pgqueue.two-phase-commit.roll-back-after}, when it is rolled back regardless.
 *
 * <pre>{@code
 * @Bean
 * InDoubtJobResolver paymentsResolver(PaymentClient payments) {
 *     return (job) -> payments.findByIdempotencyKey(job.id().toString()).isPresent();
 * }
 * }</pre>
 *
 * <p>Only jobs of kinds that have a listener in this application are passed to it. It may be called
 * more than once for the same job, and from any instance.
 */
@FunctionalInterface
public interface InDoubtJobResolver {

	/**
	 * Whether the job's external effect happened.
	 * @throws Exception when that cannot be known now; the job stays in doubt until the next round
	 */
	boolean effectHappened(InDoubtJob job) throws Exception;

}
