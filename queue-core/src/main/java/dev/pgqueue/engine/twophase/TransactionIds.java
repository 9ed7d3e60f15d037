package dev.pgqueue.engine.twophase;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

/**
 * The global ids under which jobs' transactions are prepared: {@code pgqueue:<schema>:<queue>:<job
 * public id>}. The prefix lets the resolver find this schema's prepared transactions among any
 * other application's on the server; the queue and job say what is in doubt to anyone reading
 * {@code pg_prepared_xacts}. A job's retry is prepared under the same id, never at the same time:
 * its row stays locked while it is prepared.
 */
public final class TransactionIds {

	/** Longest id PostgreSQL accepts, in bytes. */
	static final int MAX_BYTES = 199;

	/** The length of a UUID and the colon before it. */
	private static final int JOB_PART = 37;

	private TransactionIds() {
	}

	/** What every id of the schema starts with. */
	public static String prefix(SchemaName schema) {
		return "pgqueue:" + schema.value() + ":";
	}

	/** The id of a job's prepared transaction. */
	public static String of(SchemaName schema, String queue, UUID job) {
		return prefix(schema) + queue + ":" + job;
	}

	/** The queue an id of the schema names, or {@code null} when it is not one of the schema's ids. */
	static @Nullable String queueOf(SchemaName schema, String gid) {
		String prefix = prefix(schema);
		if (!gid.startsWith(prefix) || gid.length() < prefix.length() + JOB_PART + 1) {
			return null;
		}
		return gid.substring(prefix.length(), gid.length() - JOB_PART);
	}

	/** Whether the ids of a queue's jobs fit PostgreSQL's limit. */
	static boolean fits(SchemaName schema, String queue) {
		return (prefix(schema) + queue).getBytes(StandardCharsets.UTF_8).length + JOB_PART <= MAX_BYTES;
	}

}
