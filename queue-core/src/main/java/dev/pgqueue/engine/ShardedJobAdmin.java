package dev.pgqueue.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobProgress;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.sql.AdminRepository.Listed;
import org.jspecify.annotations.Nullable;

/**
 * The {@link JobAdmin} of queues spread over shards. A job's public id tells its shard, so the
 * operations on one job go to that shard (an id from before the shards, which tells none or by chance
 * one that does not hold it, is looked for on the others in turn). Lists merge every shard's jobs, newest first, behind a cursor that holds
 * each shard's position; counts and histories add up; pausing, resuming, retrying and cancelling by
 * query act on every shard. When some shards fail, the others' results come in a
 * {@link ShardsPartlyFailedException} naming the failed ones.
 *
 * <p>A shard that the watch reports down is not asked at all: it fails at once with a
 * {@link ShardUnavailableException} saying why. Asking it would wait for its pool's connection timeout
 * (30 s by default) on every operation, and a dashboard page that lists, counts and charts the jobs
 * would take minutes while one server is away.
 */
final class ShardedJobAdmin implements JobAdmin {

	private static final String EXHAUSTED = "x";

	private final ShardLayout layout;

	private final Map<String, JdbcJobAdmin> shards;

	private final Function<String, @Nullable String> whyDown;

	/**
	 * @param layout the shards, in declared order, and the shard each public id tells
	 * @param admins each shard's own admin, by shard
	 * @param whyDown why a shard counts as down now, or {@code null} while it answers (the shards'
	 * watch): a shard that is down is not asked
	 */
	ShardedJobAdmin(ShardLayout layout, Map<String, JdbcJobAdmin> admins,
			Function<String, @Nullable String> whyDown) {
		this.layout = layout;
		this.whyDown = whyDown;
		Map<String, JdbcJobAdmin> byShard = new LinkedHashMap<>();
		for (String shard : layout.shards()) {
			byShard.put(shard, Objects.requireNonNull(admins.get(shard), "no admin for shard " + shard));
		}
		this.shards = byShard;
	}

	@Override
	public Optional<JobDetails> find(UUID id) {
		return byId(id, (admin) -> admin.find(id), Optional::isPresent, Optional.empty());
	}

	@Override
	public Optional<JobDetails> findWithPayload(UUID id) {
		return byId(id, (admin) -> admin.findWithPayload(id), Optional::isPresent, Optional.empty());
	}

	@Override
	public List<JobAttempt> attempts(UUID id) {
		return byId(id, (admin) -> admin.attempts(id), (attempts) -> !attempts.isEmpty(), List.of());
	}

	@Override
	public Optional<String> output(UUID id) {
		return byId(id, (admin) -> admin.output(id), Optional::isPresent, Optional.empty());
	}

	@Override
	public Optional<JobProgress> progress(UUID id) {
		return byId(id, (admin) -> admin.progress(id), Optional::isPresent, Optional.empty());
	}

	@Override
	public AdminResult retry(UUID id) {
		return byId(id, (admin) -> admin.retry(id), ShardedJobAdmin::found, new AdminResult(id, AdminResult.Outcome.NOT_FOUND, null));
	}

	@Override
	public AdminResult cancel(UUID id) {
		return byId(id, (admin) -> admin.cancel(id), ShardedJobAdmin::found, new AdminResult(id, AdminResult.Outcome.NOT_FOUND, null));
	}

	@Override
	public AdminResult delete(UUID id) {
		return byId(id, (admin) -> admin.delete(id), ShardedJobAdmin::found, new AdminResult(id, AdminResult.Outcome.NOT_FOUND, null));
	}

	/**
	 * One page of every shard's jobs, newest first. Each shard is read from its own position in the
	 * cursor, and the pages are merged by enqueue time, each shard's jobs keeping their own order; the
	 * next cursor holds, for each shard, the last job this page took from it.
	 */
	@Override
	public JobPage list(JobQuery query) {
		Objects.requireNonNull(query, "query must not be null");
		List<String> names = this.layout.shards();
		String[] positions = positions(query.before(), names.size());
		Map<String, List<Listed>> pages = onEvery("list", (shard, admin) -> {
			String position = positions[names.indexOf(shard)];
			if (EXHAUSTED.equals(position)) {
				return List.<Listed>of();
			}
			return admin.listed(query.before(position.isEmpty() ? null : position));
		});
		int[] taken = new int[names.size()];
		List<JobDetails> jobs = new ArrayList<>();
		while (jobs.size() < query.limit()) {
			int newest = -1;
			for (int i = 0; i < names.size(); i++) {
				List<Listed> page = pages.get(names.get(i));
				if (taken[i] < page.size() && (newest < 0 || createdAt(page.get(taken[i]))
					.isAfter(createdAt(pages.get(names.get(newest)).get(taken[newest]))))) {
					newest = i;
				}
			}
			if (newest < 0) {
				break;
			}
			jobs.add(pages.get(names.get(newest)).get(taken[newest]).details());
			taken[newest]++;
		}
		boolean more = false;
		StringBuilder next = new StringBuilder("s");
		for (int i = 0; i < names.size(); i++) {
			List<Listed> page = pages.get(names.get(i));
			String position;
			if (EXHAUSTED.equals(positions[i]) || (taken[i] == page.size() && page.size() < query.limit())) {
				position = EXHAUSTED;
			}
			else {
				position = (taken[i] > 0) ? Long.toString(page.get(taken[i] - 1).id()) : positions[i];
				more = true;
			}
			next.append('.').append(position);
		}
		return new JobPage(jobs, more ? next.toString() : null);
	}

	@Override
	public long count(JobQuery query) {
		return sum(onEvery("count", (shard, admin) -> admin.count(query)));
	}

	@Override
	public List<String> kinds() {
		Set<String> kinds = new TreeSet<>();
		onEvery("kinds", (shard, admin) -> admin.kinds()).values().forEach(kinds::addAll);
		return List.copyOf(kinds);
	}

	@Override
	public Map<String, Map<JobState, Long>> counts() {
		Map<String, Map<JobState, Long>> total = new TreeMap<>();
		onEvery("counts", (shard, admin) -> admin.counts()).values()
			.forEach((counts) -> counts.forEach((queue, states) -> states.forEach((state, count) -> total
				.computeIfAbsent(queue, (name) -> new EnumMap<>(JobState.class))
				.merge(state, count, Long::sum))));
		return total;
	}

	/** Each shard's counts of jobs by queue and state, in declared order. */
	public Map<String, Map<String, Map<JobState, Long>>> countsByShard() {
		return onEvery("counts", (shard, admin) -> admin.counts());
	}

	@Override
	public Map<String, Long> finishedWithin(Duration window) {
		Map<String, Long> total = new TreeMap<>();
		onEvery("finishedWithin", (shard, admin) -> admin.finishedWithin(window)).values()
			.forEach((finished) -> finished.forEach((queue, count) -> total.merge(queue, count, Long::sum)));
		return total;
	}

	/**
	 * Every shard's history added up per queue and step: counts summed, means weighted by the attempts
	 * they cover, maxima the largest.
	 */
	@Override
	public List<QueueHistory> history(Duration window, Duration step) {
		Map<String, Map<Instant, QueueHistory.Point>> merged = new TreeMap<>();
		Map<String, Duration> steps = new LinkedHashMap<>();
		for (List<QueueHistory> histories : onEvery("history", (shard, admin) -> admin.history(window, step)).values()) {
			for (QueueHistory history : histories) {
				steps.putIfAbsent(history.queue(), history.step());
				Map<Instant, QueueHistory.Point> points = merged.computeIfAbsent(history.queue(), (queue) -> new TreeMap<>());
				history.points().forEach((point) -> points.merge(point.start(), point, ShardedJobAdmin::add));
			}
		}
		List<QueueHistory> histories = new ArrayList<>();
		merged.forEach((queue, points) -> histories
			.add(new QueueHistory(queue, steps.get(queue), new ArrayList<>(points.values()))));
		return histories;
	}

	@Override
	public int retryFailed(@Nullable String queue, @Nullable String kind) {
		return (int) sum(onEvery("retryFailed", (shard, admin) -> admin.retryFailed(queue, kind)));
	}

	@Override
	public int retryAll(JobQuery query, RetryOptions options) {
		return (int) sum(onEvery("retryAll", (shard, admin) -> admin.retryAll(query, options)));
	}

	@Override
	public int cancelAll(JobQuery query) {
		return (int) sum(onEvery("cancelAll", (shard, admin) -> admin.cancelAll(query)));
	}

	/** Pauses the queue on every shard; whether it was running on any. */
	@Override
	public boolean pause(String queue) {
		return onEvery("pause", (shard, admin) -> admin.pause(queue)).containsValue(true);
	}

	/** Resumes the queue on every shard; whether it was paused on any. */
	@Override
	public boolean resume(String queue) {
		return onEvery("resume", (shard, admin) -> admin.resume(queue)).containsValue(true);
	}

	/** The queues paused on any shard. */
	@Override
	public Set<String> pausedQueues() {
		Set<String> paused = new LinkedHashSet<>();
		onEvery("pausedQueues", (shard, admin) -> admin.pausedQueues()).values().forEach(paused::addAll);
		return paused;
	}

	private <T> T byId(UUID id, Function<JdbcJobAdmin, T> operation, Predicate<T> found, T none) {
		Objects.requireNonNull(id, "id must not be null");
		Optional<String> tagged = this.layout.shardOf(id);
		if (tagged.isPresent()) {
			checkAnswers(tagged.get(), id);
			T result = operation.apply(this.shards.get(tagged.get()));
			if (found.test(result)) {
				return result;
			}
		}
		// An id from before the shards tells none, or by chance one that does not hold it: look on the
		// others. A shard that does not answer is not asked; where the id tells a shard, that was the one.
		String down = null;
		String downWhy = null;
		for (Map.Entry<String, JdbcJobAdmin> admin : this.shards.entrySet()) {
			if (tagged.isPresent() && tagged.get().equals(admin.getKey())) {
				continue;
			}
			String why = this.whyDown.apply(admin.getKey());
			if (why != null) {
				if (down == null) {
					down = admin.getKey();
					downWhy = why;
				}
				continue;
			}
			T result = operation.apply(admin.getValue());
			if (found.test(result)) {
				return result;
			}
		}
		if (down != null && tagged.isEmpty()) {
			// Not found on the shards asked: it may be on the one that was not.
			throw new ShardUnavailableException(down, "Job " + id + " is not on the shards that answer, and shard '"
					+ down + "' does not answer (" + downWhy + "): the id is from before the shards and tells none, "
					+ "so the job may be there; try again once it answers", null);
		}
		return none;
	}

	/** Fails at once, naming the shard and why, when the watch reports it down. */
	private void checkAnswers(String shard, UUID id) {
		String why = this.whyDown.apply(shard);
		if (why != null) {
			throw new ShardUnavailableException(shard, "Shard '" + shard + "', which job " + id
					+ "'s id tells, does not answer (" + why + "), so it was not asked: try again once it answers", null);
		}
	}

	private <T> Map<String, T> onEvery(String operation, ShardOperation<T> action) {
		Map<String, T> results = new LinkedHashMap<>();
		Map<String, RuntimeException> failures = new LinkedHashMap<>();
		this.shards.forEach((shard, admin) -> {
			String why = this.whyDown.apply(shard);
			if (why != null) {
				failures.put(shard, new ShardUnavailableException(shard,
						"shard '" + shard + "' does not answer (" + why + "), so it was not asked", null));
				return;
			}
			try {
				results.put(shard, action.apply(shard, admin));
			}
			catch (RuntimeException ex) {
				failures.put(shard, ex);
			}
		});
		if (!failures.isEmpty()) {
			throw new ShardsPartlyFailedException(operation, results, failures);
		}
		return results;
	}

	private String[] positions(@Nullable String cursor, int shards) {
		String[] positions = new String[shards];
		if (cursor == null) {
			Arrays.fill(positions, "");
			return positions;
		}
		String[] parts = JdbcJobAdmin.isShardedCursor(cursor) ? cursor.split("\\.", -1) : new String[0];
		if (parts.length != shards + 1) {
			throw new IllegalArgumentException("'" + cursor + "' is not a cursor of a list over these " + shards
					+ " shards " + this.layout.shards() + ": pass the next() of a page this admin returned");
		}
		System.arraycopy(parts, 1, positions, 0, shards);
		return positions;
	}

	private static Instant createdAt(Listed listed) {
		return listed.details().createdAt();
	}

	private static boolean found(AdminResult result) {
		return result.outcome() != AdminResult.Outcome.NOT_FOUND;
	}

	private static long sum(Map<String, ? extends Number> counts) {
		return counts.values().stream().mapToLong(Number::longValue).sum();
	}

	private static QueueHistory.Point add(QueueHistory.Point one, QueueHistory.Point other) {
		long oneRuns = one.completed() + one.failed() + one.retried();
		long otherRuns = other.completed() + other.failed() + other.retried();
		return new QueueHistory.Point(one.start(), one.completed() + other.completed(), one.failed() + other.failed(),
				one.retried() + other.retried(), weighted(one.meanWait(), oneRuns, other.meanWait(), otherRuns),
				max(one.maxWait(), other.maxWait()), weighted(one.meanRun(), oneRuns, other.meanRun(), otherRuns),
				max(one.maxRun(), other.maxRun()));
	}

	private static Duration weighted(Duration one, long oneWeight, Duration other, long otherWeight) {
		long total = oneWeight + otherWeight;
		if (total == 0) {
			return one.compareTo(other) >= 0 ? one : other;
		}
		return Duration.ofNanos((one.toNanos() * oneWeight + other.toNanos() * otherWeight) / total);
	}

	private static Duration max(Duration one, Duration other) {
		return (one.compareTo(other) >= 0) ? one : other;
	}

	@FunctionalInterface
	private interface ShardOperation<T> {

		T apply(String shard, JdbcJobAdmin admin);

	}

}
