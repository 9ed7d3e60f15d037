package dev.pgqueue.engine.buckets;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.engine.sql.CoordinationRepository.BucketOwner;

/**
 * The leader's arithmetic: spreads a queue's buckets evenly over the live members, moving as few as
 * it can. Members keep the buckets they own up to their share; buckets of dead members, of members
 * over their share and buckets nobody owns go to the members under theirs.
 *
 * <p>A bucket whose owner is dead (or that has none) goes to its new owner at once. A bucket that
 * must leave a live owner is only marked for its new owner ({@code next_owner}): the live owner stops
 * claiming from it and hands it over itself, so that two members never claim from one bucket at once.
 */
final class BucketPlan {

	private BucketPlan() {
	}

	/**
	 * The rows to write so that the buckets are spread as they should be, in {@code generation}.
	 * @param buckets the queue's bucket count
	 * @param live the live members, oldest first (the oldest get the larger shares)
	 * @param current the bucket rows as they are
	 * @param generation the leader's generation, written on every row it confirms
	 */
	public static List<BucketOwner> plan(int buckets, List<String> live, List<BucketOwner> current, long generation) {
		if (live.isEmpty()) {
			return List.of();
		}
		Map<Integer, BucketOwner> rows = new HashMap<>();
		for (BucketOwner row : current) {
			rows.put(row.bucket(), row);
		}
		Map<String, Integer> share = new LinkedHashMap<>();
		for (int i = 0; i < live.size(); i++) {
			share.put(live.get(i), buckets / live.size() + ((i < buckets % live.size()) ? 1 : 0));
		}
		Map<String, Integer> held = new HashMap<>();
		String[] target = new String[buckets];
		Deque<Integer> free = new ArrayDeque<>();
		for (int bucket = 0; bucket < buckets; bucket++) {
			BucketOwner row = rows.get(bucket);
			String owner = (row != null) ? row.owner() : null;
			if (owner != null && share.containsKey(owner) && held.getOrDefault(owner, 0) < share.get(owner)) {
				target[bucket] = owner;
				held.merge(owner, 1, Integer::sum);
			}
			else {
				free.add(bucket);
			}
		}
		for (Map.Entry<String, Integer> member : share.entrySet()) {
			while (held.getOrDefault(member.getKey(), 0) < member.getValue() && !free.isEmpty()) {
				target[free.poll()] = member.getKey();
				held.merge(member.getKey(), 1, Integer::sum);
			}
		}
		List<BucketOwner> changed = new ArrayList<>();
		for (int bucket = 0; bucket < buckets; bucket++) {
			BucketOwner row = rows.get(bucket);
			BucketOwner wanted;
			if (row == null || row.owner().equals(target[bucket]) || !share.containsKey(row.owner())) {
				wanted = new BucketOwner(bucket, target[bucket], null, generation);
			}
			else {
				// Its owner is alive: it hands the bucket over once it has stopped claiming from it.
				wanted = new BucketOwner(bucket, row.owner(), target[bucket], generation);
			}
			if (!wanted.equals(row)) {
				changed.add(wanted);
			}
		}
		return changed;
	}

}
