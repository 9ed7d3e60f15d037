package dev.pgqueue.engine.limits;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.sql.LimitRepository.Candidate;

/** The jobs one claim chose so far, and what it learned about full groups. */
final class Choice {

	private final int limit;

	final List<Long> ids = new ArrayList<>();

	final List<Long> lost = new ArrayList<>();

	boolean lostAny;

	final Set<String> fullKeys = new HashSet<>();

	final Set<String> fullKinds = new HashSet<>();

	final Map<Group, Integer> used = new HashMap<>();

	boolean queueFull;

	/** Whether a job was left for want of room in this claim alone (its share, not the limit). */
	boolean shareUsedUp;

	Choice(int limit) {
		this.limit = limit;
	}

	int size() {
		return this.ids.size();
	}

	boolean isFull() {
		return this.ids.size() >= this.limit;
	}

	/**
	 * The candidates this claim would take, in claim order, if every group had the given room
	 * left besides what this claim already uses.
	 */
	List<Candidate> tentative(List<Candidate> candidates, Function<Candidate, List<Group>> groupsOf,
			ToIntFunction<Group> room) {
		Map<Group, Integer> counted = new HashMap<>(this.used);
		List<Candidate> wanted = new ArrayList<>();
		for (Candidate candidate : candidates) {
			if (this.ids.size() + wanted.size() >= this.limit) {
				break;
			}
			List<Group> groups = groupsOf.apply(candidate);
			boolean fits = true;
			for (Group group : groups) {
				if (counted.getOrDefault(group, 0) >= room.applyAsInt(group)) {
					fits = false;
					full(group);
					this.shareUsedUp |= room.applyAsInt(group) < group.limit();
				}
			}
			if (fits) {
				wanted.add(candidate);
				groups.forEach((group) -> counted.merge(group, 1, Integer::sum));
			}
		}
		return wanted;
	}

	/**
	 * Takes the wanted candidates whose every group was granted a slot, in claim order; returns
	 * them.
	 */
	List<Candidate> take(List<Candidate> wanted, Function<Candidate, List<Group>> groupsOf,
			Map<Group, Integer> granted) {
		List<Candidate> taken = new ArrayList<>();
		Map<Group, Integer> left = new HashMap<>(granted);
		for (Candidate candidate : wanted) {
			List<Group> groups = groupsOf.apply(candidate);
			boolean granting = true;
			for (Group group : groups) {
				if (left.getOrDefault(group, 0) <= 0) {
					granting = false;
					full(group);
				}
			}
			if (granting) {
				groups.forEach((group) -> {
					left.merge(group, -1, Integer::sum);
					this.used.merge(group, 1, Integer::sum);
				});
				this.ids.add(candidate.id());
				taken.add(candidate);
			}
		}
		return taken;
	}

	/** Gives up the taken candidates that were not locked: another batch had them meanwhile. */
	void lost(List<Candidate> taken, List<ClaimedJob> locked, Function<Candidate, List<Group>> groupsOf) {
		Set<Long> got = new HashSet<>();
		locked.forEach((job) -> got.add(job.id()));
		for (Candidate candidate : taken) {
			if (!got.contains(candidate.id())) {
				this.ids.remove(candidate.id());
				this.lost.add(candidate.id());
				this.lostAny = true;
				groupsOf.apply(candidate).forEach((group) -> this.used.merge(group, -1, Integer::sum));
			}
		}
	}

	/** Jobs the next read leaves out: taken, or lost to another batch. */
	List<Long> excludedIds() {
		List<Long> excluded = new ArrayList<>(this.ids);
		excluded.addAll(this.lost);
		return excluded;
	}

	private void full(Group group) {
		switch (group.type()) {
			case KEY -> this.fullKeys.add(group.name());
			case KIND -> this.fullKinds.add(group.name());
			case QUEUE -> this.queueFull = true;
		}
	}

	String[] readableKinds(String[] kinds) {
		return Arrays.stream(kinds).filter((kind) -> !this.fullKinds.contains(kind)).toArray(String[]::new);
	}

}
