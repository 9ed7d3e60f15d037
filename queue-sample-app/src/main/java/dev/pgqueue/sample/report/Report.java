package dev.pgqueue.sample.report;

import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.util.UUID;

/**
 * A generated monthly report.
 *
 * @param jobId the job that generated it
 * @param accountId whose report it is
 * @param month the month it covers
 * @param emailsSent emails sent to the account in that month
 * @param attempt the attempt of the job that wrote it
 * @param generatedAt when it was written
 */
public record Report(UUID jobId, long accountId, YearMonth month, int emailsSent, int attempt,
		OffsetDateTime generatedAt) {

}
