package dev.pgqueue.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/** The dashboard. */
public class QueueDashboardProperties {

	/**
	 * Whether the application serves the dashboard. It needs a servlet web application with Spring
	 * MVC.
	 */
	private boolean enabled;

	/**
	 * Path of the dashboard, below the servlet context path: starts with '/', does not end with
	 * one.
	 */
	private String path = "/pgqueue";

	/**
	 * Role a user needs, with Spring Security, to act in the dashboard: retry and cancel jobs,
	 * pause and resume queues and schedules, run schedules now and delete them. Given without
	 * Spring Security's 'ROLE_' prefix.
	 */
	private String writeRole = "PGQUEUE_ADMIN";

	/**
	 * Role a user needs, with Spring Security, to look at the dashboard (its jobs' payloads,
	 * errors, tags and keys), given without the 'ROLE_' prefix; users with the write role look
	 * too. Unset, every signed-in user may look.
	 */
	private @Nullable String readRole;

	/**
	 * When the messages of jobs' errors, attempts and progress, which may quote the application's
	 * data, are shown as they are; otherwise an error shows its exceptions' classes and stack frames
	 * only. 'when-authorized' shows them to signed-in users, with Spring Security, who pass the read
	 * role; without Spring Security to sign anyone in, that is nobody.
	 */
	private ShowValues showValues = ShowValues.WHEN_AUTHORIZED;

	/**
	 * Whether anyone who reaches the dashboard may act in it (retry, cancel, pause, resume, run
	 * now, delete) when the application has no Spring Security. Nothing then guards these actions but
	 * the refusal of cross-site forms: only for an application on a trusted network or a developer's
	 * machine.
	 */
	private boolean allowWritesWithoutSecurity;

	/**
	 * How often an open page reloads its queues and jobs. Zero turns reloading off.
	 */
	private Duration refreshInterval = Duration.ofSeconds(5);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public String getWriteRole() {
		return this.writeRole;
	}

	public void setWriteRole(String writeRole) {
		this.writeRole = writeRole;
	}

	public @Nullable String getReadRole() {
		return this.readRole;
	}

	public void setReadRole(@Nullable String readRole) {
		this.readRole = readRole;
	}

	public ShowValues getShowValues() {
		return this.showValues;
	}

	public void setShowValues(ShowValues showValues) {
		this.showValues = showValues;
	}

	public boolean isAllowWritesWithoutSecurity() {
		return this.allowWritesWithoutSecurity;
	}

	public void setAllowWritesWithoutSecurity(boolean allowWritesWithoutSecurity) {
		this.allowWritesWithoutSecurity = allowWritesWithoutSecurity;
	}

	public Duration getRefreshInterval() {
		return this.refreshInterval;
	}

	public void setRefreshInterval(Duration refreshInterval) {
		this.refreshInterval = refreshInterval;
	}

	/** When the dashboard shows the messages of jobs' errors, attempts and progress as they are. */
	public enum ShowValues {

		/** Never: errors show their exceptions' classes and frames only. */
		NEVER,

		/** To signed-in users who may look at the dashboard, with Spring Security. */
		WHEN_AUTHORIZED,

		/** To everyone who may look at the dashboard. */
		ALWAYS

	}

}
