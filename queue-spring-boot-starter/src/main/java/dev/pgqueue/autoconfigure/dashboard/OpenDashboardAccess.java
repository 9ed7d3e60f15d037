package dev.pgqueue.autoconfigure.dashboard;

import java.util.Map;

import dev.pgqueue.autoconfigure.QueueDashboardProperties.ShowValues;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/**
 * Access without Spring Security: anyone who reaches the dashboard sees it, and acts only where
 * {@code pgqueue.dashboard.allow-writes-without-security} says so. With no user to name, the
 * {@link dev.pgqueue.JobAdmin} log names its default caller; the address each action came from is
 * logged here.
 */
final class OpenDashboardAccess implements DashboardAccess {

	private static final Logger logger = LoggerFactory.getLogger(OpenDashboardAccess.class);

	private final boolean allowWrites;

	private final ShowValues showValues;

	OpenDashboardAccess(boolean allowWrites) {
		this(allowWrites, ShowValues.WHEN_AUTHORIZED);
	}

	/**
	 * @param allowWrites whether anyone who reaches the dashboard may act
	 * @param showValues when messages are shown as they are: with no user to authorize, only
	 * {@code always} shows them
	 */
	OpenDashboardAccess(boolean allowWrites, ShowValues showValues) {
		this.allowWrites = allowWrites;
		this.showValues = showValues;
	}

	@Override
	public boolean showsValues(HttpServletRequest request) {
		return this.showValues == ShowValues.ALWAYS;
	}

	@Override
	public void checkRead(HttpServletRequest request) {
	}

	@Override
	public boolean mayWrite(HttpServletRequest request) {
		return this.allowWrites;
	}

	@Override
	public void checkWrite(HttpServletRequest request) {
		if (!this.allowWrites) {
			throw new ResponseStatusException(HttpStatus.FORBIDDEN, "The pgqueue dashboard is read-only: the "
					+ "application has no Spring Security to say who may act. Add Spring Security (users with the "
					+ "role of pgqueue.dashboard.write-role may act), or set "
					+ "pgqueue.dashboard.allow-writes-without-security=true where anyone who reaches it may");
		}
		logger.info("pgqueue dashboard: {} {} from {}, without security to name the user", request.getMethod(),
				request.getRequestURI(), request.getRemoteAddr());
	}

	@Override
	public Map<String, String> formFields(HttpServletRequest request) {
		return Map.of();
	}

	@Override
	public String describe(HttpServletRequest request) {
		return this.allowWrites ? "No security: anyone who reaches this page may act"
				: "Read-only: the application has no security";
	}

	@Override
	public String rules() {
		return this.allowWrites ? "no Spring Security; anyone who reaches it may retry, cancel, pause, resume, run "
				+ "now and delete (pgqueue.dashboard.allow-writes-without-security)" : "no Spring Security; read-only";
	}

}
