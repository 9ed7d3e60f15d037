package dev.pgqueue;

import org.jspecify.annotations.Nullable;

/**
 * What a running job's listener can ask and tell the queue: whether an operator asked to cancel it,
 * and how far it has come. A {@link JobListener @JobListener} method receives it by declaring a
 * parameter of this type (beside the payload and the {@link Job}, in any order):
 *
 * <pre>{@code
 * @JobListener(kind = "report.build", queue = "reports", timeout = "1h")
 * void build(ReportRequest request, JobContext context) {
 *     for (int page = 1; page <= pages; page++) {
 *         if (context.isCancellationRequested()) {
 *             return; // the job ends cancelled whatever the listener returns
 *         }
 *         render(page);
 *         context.progress(page * 100 / pages, "page " + page + " of " + pages);
 *     }
 * }
 * }</pre>
 *
 * <p>A cancel also interrupts the listener's thread and, in a transactional queue, cancels its
 * running statement; checking here is for listeners that do long work without blocking calls.
 */
public interface JobContext {

	/** The job being run. */
	Job job();

	/**
	 * Whether an operator asked to cancel this job while it runs ({@link JobAdmin#cancel}). Once true,
	 * the attempt ends {@code cancelled} whatever the listener does next, and its work is treated as a
	 * failed attempt's (rolled back in a transactional queue); the sooner the listener returns, the
	 * sooner its worker moves on.
	 */
	boolean isCancellationRequested();

	/**
	 * Reports how far the job has come, for operators (the dashboard's job page, the endpoint). Cheap
	 * to call often: the latest report is stored at most every few seconds, not per call, and is
	 * cleared when the job ends.
	 * @param percent 0 to 100
	 * @param message a short note such as "page 3 of 40", or {@code null}; at most 200 characters are
	 * kept, and never put payload data in it
	 * @throws IllegalArgumentException when {@code percent} is outside 0 to 100
	 */
	void progress(int percent, @Nullable String message);

}
