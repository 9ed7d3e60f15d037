package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.OnConflict;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Enqueues jobs that carry a unique key, in the caller's transaction if there is one.
 *
 * <p>Each round is at most three statements for however many jobs: an insert (which also notifies
 * the queues that got due jobs, and writes keys held for a period only when a job has one) that the
 * database turns away for every key already held (the unique index decides, so two instances enqueueing the same key
 * at once get one job), a change of the waiting jobs that hold the keys of requests that replace or
 * debounce, and a look-up of the job that holds each key still unresolved. A key whose holder finished
 * between the insert and the look-up is free again, so it goes to the next round; a round that leaves
 * one unresolved is as unlikely as a job finishing between two statements of one enqueue, and after
 * {@value #MAX_ROUNDS} the enqueue fails rather than loop.
 *
 * <p>When two transactions insert the same free key at once, the second waits, inside its insert, for
 * the first to end: if the first commits, the second inserts nothing and reads the first's job (a
 * statement in {@code READ COMMITTED} sees it; in {@code REPEATABLE READ} or {@code SERIALIZABLE}
 * PostgreSQL reports a serialization failure instead, which the caller retries); if it rolls back, the
 * second inserts its own.
 *
 * <p>An insert that skips held keys ({@code ON CONFLICT DO NOTHING}) inserts each row speculatively:
 * it probes the unique index, inserts, then checks the index again, which makes an insert of fresh
 * keys 5 to 30 % slower (pgbench, on this project's table) than the same insert with no way around a
 * held key. So an enqueue with keys outside a transaction (the connection in autocommit, where a failed statement undoes only
 * itself) first tries the plain insert: if no key is held, that was the whole enqueue; if one is,
 * the statement fails and undoes itself, and the rounds above run as usual. A failure costs that
 * statement's work and leaves its rows dead until vacuum, so after one the plain insert is not tried
 * for the next enqueue, after two in a row for the next two, then four, up to
 * {@value PlainUniqueInsert.FailFast#MAX_SKIPS}: a caller whose keys are often held soon pays almost nothing for it,
 * and one whose keys are fresh keeps the cheaper insert. In the caller's transaction the plain insert
 * would need a savepoint, a subtransaction that stays with the transaction until it ends, so it is
 * never tried there.
 */
public final class UniqueJobRepository {

	/** Rounds before an enqueue whose keys keep being freed and taken gives up. */
	static final int MAX_ROUNDS = 5;

	private final JdbcTemplate jdbc;

	private final UniqueStatements sql;

	private final boolean notify;

	private final PlainUniqueInsert plainInsert;

	/**
	 * @param notify whether notifications are on: an enqueue that makes jobs due may notify their
	 * queues
	 */
	public UniqueJobRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.sql = new UniqueStatements(schema);
		this.notify = notify;
		this.plainInsert = new PlainUniqueInsert(jdbc, this.sql);
	}

	/**
	 * Inserts each job whose key is free and resolves the others to the job that holds their key,
	 * changing it as their conflict policy says.
	 * @param jobs jobs that each carry a {@link NewJob#unique()} key
	 * @param notify whether to notify the queues that got due jobs, if notifications are on
	 * @return for each job, in order: what became of it
	 */
	public List<Enqueued> insert(List<NewJob> jobs, boolean notify) {
		return insert(jobs, notify, null);
	}

	/**
	 * As {@link #insert(List, boolean)}; several jobs outside the caller's transaction take their
	 * statements after the first in {@code atomically}, so that a failure leaves none of them enqueued.
	 * The first, the plain insert (see {@link PlainUniqueInsert}), runs before it, on its own: it inserts
	 * all or nothing, and a failure on a held key, which it is there to risk, must not abort a transaction.
	 * @param atomically a transaction of the engine's own on the jobs' database, or {@code null} to run
	 * each statement as the caller's transaction (or autocommit) has it
	 */
	public List<Enqueued> insert(List<NewJob> jobs, boolean notify, @Nullable TransactionTemplate atomically) {
		for (NewJob job : jobs) {
			if (job.unique() == null) {
				throw new IllegalArgumentException("Job " + job.publicId() + " has no unique key");
			}
		}
		if (atomically == null || jobs.size() == 1 || TransactionSynchronizationManager.isActualTransactionActive()) {
			return Objects.requireNonNull(rounds(jobs, notify, Plain.FIRST));
		}
		List<Enqueued> all = rounds(jobs, notify, Plain.ONLY);
		if (all != null) {
			return all;
		}
		return Objects.requireNonNull(atomically.execute((status) -> rounds(jobs, notify, Plain.NEVER)));
	}

	/** Whether the rounds try the plain insert first, and whether they stop when it is not done. */
	private enum Plain {

		/** Tried first; the rounds go on where it was not done or not enough. */
		FIRST,

		/** Tried alone: {@code null} when it was not done (not tried, or a key held). */
		ONLY,

		/** Not tried. */
		NEVER

	}

	private @Nullable List<Enqueued> rounds(List<NewJob> jobs, boolean notify, Plain plain) {
		int n = jobs.size();
		Enqueued[] results = new Enqueued[n];
		Set<String> dueQueues = new LinkedHashSet<>();
		List<Integer> pending = new ArrayList<>(n);
		for (int i = 0; i < n; i++) {
			pending.add(i);
		}
		boolean notifying = notify && this.notify;
		Set<String> notified = new LinkedHashSet<>();
		for (int round = 0; round < MAX_ROUNDS && !pending.isEmpty(); round++) {
			Set<UUID> inserted = (round == 0 && plain != Plain.NEVER)
					? this.plainInsert.tryInsert(jobs, notifying, notifying ? notified : dueQueues) : null;
			if (inserted == null && plain == Plain.ONLY) {
				return null;
			}
			if (inserted == null) {
				inserted = insertFree(jobs, pending, notifying, notifying ? notified : dueQueues);
			}
			List<Integer> conflicted = new ArrayList<>();
			for (int i : pending) {
				if (inserted.contains(jobs.get(i).publicId())) {
					results[i] = new Enqueued(jobs.get(i).publicId(), Outcome.INSERTED);
				}
				else {
					conflicted.add(i);
				}
			}
			changeWaiting(jobs, conflicted, results, dueQueues);
			List<Integer> unresolved = new ArrayList<>();
			for (int i : conflicted) {
				if (results[i] == null) {
					unresolved.add(i);
				}
			}
			Map<Integer, UUID> holders = holders(jobs, unresolved);
			pending = new ArrayList<>();
			for (int i : unresolved) {
				UUID holder = holders.get(i);
				if (holder != null) {
					results[i] = new Enqueued(holder, Outcome.KEPT);
				}
				else {
					pending.add(i);
				}
			}
		}
		if (!pending.isEmpty()) {
			NewJob job = jobs.get(pending.get(0));
			throw new IllegalStateException("Could not enqueue the '" + job.kind() + "' job with unique key '"
					+ job.unique().key() + "': its key was taken and freed again " + MAX_ROUNDS
					+ " times during this enqueue. Retry the enqueue.");
		}
		// The inserts notified their own queues; a replaced or debounced job that became due needs one more.
		dueQueues.removeAll(notified);
		if (notifying && !dueQueues.isEmpty()) {
			String[] queues = dueQueues.toArray(new String[0]);
			this.jdbc.query((Connection con) -> {
				PreparedStatement ps = con.prepareStatement(this.sql.notifyQueues);
				ps.setArray(1, con.createArrayOf("text", queues));
				return ps;
			}, (ResultSet rs) -> {
			});
		}
		return List.of(results);
	}

	/** Deletes up to {@code batchSize} keys whose period ended; returns how many. */
	public int pruneEndedPeriods(int batchSize) {
		return this.jdbc.update(this.sql.pruneEndedPeriods, batchSize);
	}

	/**
	 * Inserts the jobs whose keys are free, notifying their queues in the same statement if asked;
	 * adds the queues that got due jobs to {@code dueQueues}.
	 */
	private Set<UUID> insertFree(List<NewJob> jobs, List<Integer> indexes, boolean notifying, Set<String> dueQueues) {
		List<NewJob> selected = indexes.stream().map(jobs::get).toList();
		boolean anyPeriod = selected.stream().anyMatch((job) -> job.unique().periodic());
		Set<UUID> inserted = new LinkedHashSet<>();
		RowCallbackHandler rows = (ResultSet rs) -> UniqueInserts.read(rs, inserted, dueQueues);
		if (selected.size() == 1 && !anyPeriod) {
			this.jdbc.query(notifying ? this.sql.insertOneWhileUnfinishedNotifying : this.sql.insertOneWhileUnfinished,
					rows, UniqueInserts.oneRow(selected.get(0)));
			return inserted;
		}
		String statement = anyPeriod ? (notifying ? this.sql.insertNotifying : this.sql.insert)
				: (notifying ? this.sql.insertWhileUnfinishedNotifying : this.sql.insertWhileUnfinished);
		this.jdbc.query(UniqueInserts.many(statement, selected), rows);
		return inserted;
	}

	/**
	 * Replaces or debounces the waiting jobs that hold the keys of those requests that ask for it. Of
	 * several requests for one key in the same enqueue, the last decides.
	 */
	private void changeWaiting(List<NewJob> jobs, List<Integer> conflicted, @Nullable Enqueued[] results,
			Set<String> dueQueues) {
		Map<KindKey, Integer> last = new LinkedHashMap<>();
		Map<KindKey, List<Integer>> requests = new HashMap<>();
		for (int i : conflicted) {
			NewJob job = jobs.get(i);
			if (job.unique().onConflict() == OnConflict.KEEP || job.unique().periodic()) {
				continue;
			}
			KindKey key = new KindKey(job.kind(), job.unique().key());
			last.put(key, i);
			requests.computeIfAbsent(key, (k) -> new ArrayList<>()).add(i);
		}
		if (last.isEmpty()) {
			return;
		}
		int n = last.size();
		String[] kinds = new String[n];
		String[] keys = new String[n];
		String[] policies = new String[n];
		String[] payloads = new String[n];
		Timestamp[] runAts = new Timestamp[n];
		Long[] delays = new Long[n];
		Long[] jitters = new Long[n];
		Integer[] weights = new Integer[n];
		int k = 0;
		for (int i : last.values()) {
			NewJob job = jobs.get(i);
			kinds[k] = job.kind();
			keys[k] = job.unique().key();
			policies[k] = job.unique().onConflict().name();
			payloads[k] = job.payloadJson();
			runAts[k] = JobRepository.timestamp(job.runAt());
			delays[k] = JobRepository.delayMicros(job.delay());
			jitters[k] = JobRepository.delayMicros(job.jitter());
			weights[k] = job.rateWeight();
			k++;
		}
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.changeWaiting);
			ps.setArray(1, con.createArrayOf("text", kinds));
			ps.setArray(2, con.createArrayOf("text", keys));
			ps.setArray(3, con.createArrayOf("text", policies));
			ps.setArray(4, con.createArrayOf("text", payloads));
			ps.setArray(5, con.createArrayOf("timestamptz", runAts));
			ps.setArray(6, con.createArrayOf("int8", delays));
			ps.setArray(7, con.createArrayOf("int8", jitters));
			ps.setArray(8, con.createArrayOf("int4", weights));
			return ps;
		}, (ResultSet rs) -> {
			KindKey key = new KindKey(rs.getString(1), rs.getString(2));
			UUID holder = rs.getObject(3, UUID.class);
			if ("available".equals(rs.getString(5))) {
				dueQueues.add(rs.getString(4));
			}
			for (int i : requests.getOrDefault(key, List.of())) {
				Outcome outcome = (jobs.get(i).unique().onConflict() == OnConflict.REPLACE) ? Outcome.REPLACED
						: Outcome.DEBOUNCED;
				results[i] = new Enqueued(holder, outcome);
			}
		});
	}

	private Map<Integer, UUID> holders(List<NewJob> jobs, List<Integer> indexes) {
		Map<Integer, UUID> holders = new HashMap<>();
		if (indexes.isEmpty()) {
			return holders;
		}
		int n = indexes.size();
		Integer[] positions = new Integer[n];
		String[] kinds = new String[n];
		String[] keys = new String[n];
		Long[] periods = new Long[n];
		Timestamp[] periodStarts = new Timestamp[n];
		for (int k = 0; k < n; k++) {
			NewJob job = jobs.get(indexes.get(k));
			positions[k] = indexes.get(k);
			kinds[k] = job.kind();
			keys[k] = job.unique().key();
			periods[k] = job.unique().periodSeconds();
			periodStarts[k] = JobRepository.timestamp(job.unique().periodStart());
		}
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.holders);
			ps.setArray(1, con.createArrayOf("int4", positions));
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setArray(3, con.createArrayOf("text", keys));
			ps.setArray(4, con.createArrayOf("int8", periods));
			ps.setArray(5, con.createArrayOf("timestamptz", periodStarts));
			return ps;
		}, (ResultSet rs) -> {
			UUID holder = rs.getObject(2, UUID.class);
			if (holder != null) {
				holders.put(rs.getInt(1), holder);
			}
		});
		return holders;
	}

	/** What an enqueue with a unique key did. */
	public enum Outcome {

		/** The key was free: the job was inserted. */
		INSERTED,

		/** The key was held: nothing was inserted and the holder was left as it was. */
		KEPT,

		/** The key was held by a waiting job, which took the request's payload and run time. */
		REPLACED,

		/** The key was held by a waiting job, whose run time moved to the request's. */
		DEBOUNCED

	}

	/**
	 * What became of one job of an enqueue.
	 * @param publicId the id of the job that holds the key: the new job's, or the one that held it
	 */
	public record Enqueued(UUID publicId, Outcome outcome) {

	}

	private record KindKey(String kind, String key) {

	}

}
