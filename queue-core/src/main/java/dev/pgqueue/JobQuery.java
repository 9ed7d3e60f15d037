package dev.pgqueue;

import java.time.Instant;
import java.util.StringJoiner;

import org.jspecify.annotations.Nullable;

/**
 * Which jobs {@link JobAdmin#list} returns: those of a queue, a kind, a state, a tag, with an error
 * text and finished since an instant (each optional), newest first, at most {@code limit}, before a
 * cursor from the previous page. The same filters choose the jobs that {@link JobAdmin#count},
 * {@link JobAdmin#retryAll} and {@link JobAdmin#cancelAll} count or act on; those ignore the cursor
 * and the limit.
 *
 * <pre>{@code
 * JobPage page = admin.list(JobQuery.all().queue("mail").state(JobState.FAILED));
 * JobPage next = admin.list(JobQuery.all().queue("mail").state(JobState.FAILED).before(page.next()));
 * int retried = admin.retryAll(JobQuery.all().kind("email.welcome").finishedSince(Instant.parse("2026-11-26T08:00:00Z")));
 * }</pre>
 *
 * @param queue only jobs of this queue, or {@code null} for every queue
 * @param kind only jobs of this kind, or {@code null} for every kind
 * @param state only jobs in this state, or {@code null} for every state
 * @param before only jobs older than the last of the page this cursor came from ({@link JobPage#next()}),
 * or {@code null} for the newest
 * @param limit most jobs to return, 1 to {@value #MAX_LIMIT}
 * @param tag only jobs enqueued with this tag ({@link JobRequest#tags}), or {@code null} for any
 * @param error only jobs whose last error contains this text, ignoring case, or {@code null} for any
 * @param finishedSince only jobs that finished (completed, failed or were cancelled) at or after this
 * instant, or {@code null} for any job
 */
public record JobQuery(@Nullable String queue, @Nullable String kind, @Nullable JobState state, @Nullable String before,
		int limit, @Nullable String tag, @Nullable String error, @Nullable Instant finishedSince) {

	/** Longest error text a query may search for. */
	public static final int MAX_ERROR_TEXT = 200;

	/** Jobs in a page unless the query says otherwise. */
	public static final int DEFAULT_LIMIT = 50;

	/** Most jobs one page may hold. */
	public static final int MAX_LIMIT = 500;

	/** Longest cursor across shards: one position of at most 20 characters for each of 200 shards. */
	private static final int MAX_SHARDS_CURSOR = 4096;

	public JobQuery(@Nullable String queue, @Nullable String kind, @Nullable JobState state, @Nullable String before,
			int limit) {
		this(queue, kind, state, before, limit, null);
	}

	public JobQuery(@Nullable String queue, @Nullable String kind, @Nullable JobState state, @Nullable String before,
			int limit, @Nullable String tag) {
		this(queue, kind, state, before, limit, tag, null, null);
	}

	public JobQuery {
		if (limit < 1 || limit > MAX_LIMIT) {
			throw new IllegalArgumentException("A page holds 1 to " + MAX_LIMIT + " jobs, not " + limit);
		}
		if (before != null && !isCursor(before)) {
			throw new IllegalArgumentException("'" + before + "' is not a cursor: pass the next() of a JobPage");
		}
		storable("queue", queue);
		storable("kind", kind);
		storable("tag", tag);
		storable("error text", error);
		if (finishedSince != null) {
			JobRequest.requireStorable("The finish time to search from", finishedSince);
		}
		if (error != null && (error.isBlank() || error.length() > MAX_ERROR_TEXT)) {
			throw new IllegalArgumentException("An error text to search for holds 1 to " + MAX_ERROR_TEXT
					+ " characters, not blank; got " + error.length());
		}
	}

	/**
	 * Refuses U+0000 or half a surrogate pair in a filter: no job's text holds either, and the statement
	 * would fail on the first.
	 */
	private static void storable(String filter, @Nullable String value) {
		if (value != null) {
			JobRequest.requireStorable("The " + filter + " to search for", value);
		}
	}

	private static boolean isCursor(String value) {
		// A list across shards carries one position per shard ("s.<id>.x.", say), each empty, "x" or a
		// shard's own cursor. Read without a regular expression, whose repeated group would recurse once
		// per position and overflow the stack on a long enough value.
		if (value.startsWith("s.")) {
			if (value.length() > MAX_SHARDS_CURSOR) {
				return false;
			}
			for (String position : value.substring(2).split("\\.", -1)) {
				if (!position.isEmpty() && !position.equals("x") && !isPosition(position)) {
					return false;
				}
			}
			return true;
		}
		return isPosition(value);
	}

	/** One database's cursor: the id of the last job of a page, 1 to 19 digits within a {@code long}. */
	private static boolean isPosition(String value) {
		if (value.isEmpty() || value.length() > 19) {
			return false;
		}
		for (int i = 0; i < value.length(); i++) {
			if (value.charAt(i) < '0' || value.charAt(i) > '9') {
				return false;
			}
		}
		try {
			Long.parseLong(value);
			return true;
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

	/**
	 * The filters in words, for a log line or a confirmation: {@code queue 'mail', tag 'eu', state
	 * failed}, or {@code every job} when there is none. The cursor and the limit are left out.
	 */
	public String describe() {
		StringJoiner text = new StringJoiner(", ");
		text.setEmptyValue("every job");
		if (this.queue != null) {
			text.add("queue '" + this.queue + "'");
		}
		if (this.kind != null) {
			text.add("kind '" + this.kind + "'");
		}
		if (this.tag != null) {
			text.add("tag '" + this.tag + "'");
		}
		if (this.error != null) {
			text.add("an error containing '" + this.error + "'");
		}
		if (this.finishedSince != null) {
			text.add("finished since " + this.finishedSince);
		}
		if (this.state != null) {
			text.add("state " + this.state.sqlValue());
		}
		return text.toString();
	}

	/** The newest jobs of every queue, kind and state. */
	public static JobQuery all() {
		return new JobQuery(null, null, null, null, DEFAULT_LIMIT);
	}

	public JobQuery queue(@Nullable String queue) {
		return new JobQuery(queue, this.kind, this.state, this.before, this.limit, this.tag,
				this.error, this.finishedSince);
	}

	public JobQuery kind(@Nullable String kind) {
		return new JobQuery(this.queue, kind, this.state, this.before, this.limit, this.tag,
				this.error, this.finishedSince);
	}

	public JobQuery state(@Nullable JobState state) {
		return new JobQuery(this.queue, this.kind, state, this.before, this.limit, this.tag,
				this.error, this.finishedSince);
	}

	public JobQuery before(@Nullable String cursor) {
		return new JobQuery(this.queue, this.kind, this.state, cursor, this.limit, this.tag,
				this.error, this.finishedSince);
	}

	/** Only jobs enqueued with this tag; {@code null} for any. */
	public JobQuery tag(@Nullable String tag) {
		return new JobQuery(this.queue, this.kind, this.state, this.before, this.limit, tag,
				this.error, this.finishedSince);
	}

	/** Only jobs whose last error contains this text, ignoring case; {@code null} for any. */
	public JobQuery error(@Nullable String text) {
		return new JobQuery(this.queue, this.kind, this.state, this.before, this.limit, this.tag, text,
				this.finishedSince);
	}

	/** Only jobs that finished at or after this instant; {@code null} for any job. */
	public JobQuery finishedSince(@Nullable Instant instant) {
		return new JobQuery(this.queue, this.kind, this.state, this.before, this.limit, this.tag, this.error,
				instant);
	}

	/** Whether the query names anything but a state, a cursor and a limit. */
	public boolean narrowed() {
		return this.queue != null || this.kind != null || this.tag != null || this.error != null
				|| this.finishedSince != null;
	}

	public JobQuery limit(int limit) {
		return new JobQuery(this.queue, this.kind, this.state, this.before, limit, this.tag,
				this.error, this.finishedSince);
	}

}
