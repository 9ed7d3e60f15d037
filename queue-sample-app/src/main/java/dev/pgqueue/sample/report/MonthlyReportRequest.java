package dev.pgqueue.sample.report;

import java.time.YearMonth;

/**
 * Payload of a {@value #KIND} job.
 *
 * @param accountId whose report
 * @param month which month it covers
 */
public record MonthlyReportRequest(long accountId, YearMonth month) {

	/** The job kind; producer and listener must agree on it. */
	public static final String KIND = "report.monthly";

}
