package dev.pgqueue.autoconfigure.dashboard;

import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Who may look at the dashboard and who may act in it (retry, cancel, pause, resume, run now,
 * delete), and what a form that acts must carry to be accepted.
 */
interface DashboardAccess {

	/** Refuses, by throwing, a request that may not see the dashboard. */
	void checkRead(HttpServletRequest request);

	/** Whether this request's user may act; the pages show the buttons only then. */
	boolean mayWrite(HttpServletRequest request);

	/** Refuses, by throwing, a request that may not act. */
	void checkWrite(HttpServletRequest request);

	/**
	 * Whether this request's user sees the messages of jobs' errors, attempts and progress as they are
	 * ({@code pgqueue.dashboard.show-values}).
	 */
	boolean showsValues(HttpServletRequest request);

	/** Hidden fields a form that acts must send back, by name. */
	Map<String, String> formFields(HttpServletRequest request);

	/** Who is looking and what they may do, for the page's header. */
	String describe(HttpServletRequest request);

	/** Who may look and act, for the log at start-up. */
	String rules();

}
