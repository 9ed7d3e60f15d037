package dev.pgqueue.engine.sql;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.job.Uniqueness;

import org.springframework.jdbc.core.PreparedStatementCreator;

/**
 * Binds the inserts of jobs with unique keys ({@link UniqueStatements}) and reads what they return:
 * the same for the plain insert tried first and for the inserts that skip held keys.
 */
final class UniqueInserts {

	private UniqueInserts() {
	}

	/** An insert of many jobs: their columns, then their keys, periods and period starts as arrays. */
	static PreparedStatementCreator many(String statement, List<NewJob> jobs) {
		int n = jobs.size();
		String[] keys = new String[n];
		Long[] periods = new Long[n];
		Timestamp[] periodStarts = new Timestamp[n];
		for (int k = 0; k < n; k++) {
			Uniqueness unique = jobs.get(k).unique();
			keys[k] = unique.key();
			periods[k] = unique.periodSeconds();
			periodStarts[k] = JobRepository.timestamp(unique.periodStart());
		}
		NewJobColumns columns = new NewJobColumns(jobs);
		return (con) -> {
			PreparedStatement ps = con.prepareStatement(statement);
			columns.bind(con, ps);
			ps.setArray(NewJobColumns.COUNT + 1, con.createArrayOf("text", keys));
			ps.setArray(NewJobColumns.COUNT + 2, con.createArrayOf("int8", periods));
			ps.setArray(NewJobColumns.COUNT + 3, con.createArrayOf("timestamptz", periodStarts));
			return ps;
		};
	}

	/** The parameters of the insert of one job held while it is unfinished. */
	static Object[] oneRow(NewJob job) {
		return new Object[] { job.publicId(), job.kind(), job.queue(), job.payloadJson(), job.priority(),
				JobRepository.timestamp(job.runAt()), JobRepository.delayMicros(job.delay()), job.maxAttempts(),
				JobRepository.delayMicros(job.jitter()), job.bucket(), job.concurrencyKey(),
				TraceContextColumn.write(job.traceContext()), job.tagsLiteral(), job.rateWeight(), job.unique().key(), 0L,
				null };
	}

	/** Reads one row an insert returned: the job's id, and its queue if the job is due. */
	static void read(ResultSet rs, Set<UUID> inserted, Set<String> dueQueues) throws SQLException {
		inserted.add(rs.getObject(1, UUID.class));
		if ("available".equals(rs.getString(3))) {
			dueQueues.add(rs.getString(2));
		}
	}

}
