package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.pgqueue.JobClient;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.ShardedJobAdmin;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.schema.QueueMigrator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * The shards configured under {@code pgqueue.shards}: one engine per shard, each with its own pollers,
 * services and jobs table, started and stopped together; the {@link JobClient} that routes each new job
 * to its shard; and the DataSource that follows a transaction to its shard, for a transactional job's
 * listener to write through on its job's shard.
 */
public final class QueueShards implements SmartLifecycle, DisposableBean {

	private static final Logger logger = LoggerFactory.getLogger(QueueShards.class);

	/** Time between two probes of a shard. */
	static final Duration WATCH_INTERVAL = Duration.ofMillis(200);

	/** How long a shard may go without answering before its keyed jobs are refused. */
	static final Duration WATCH_TIMEOUT = Duration.ofSeconds(1);

	/** Time between two tries to migrate a shard that did not answer at start-up. */
	static final Duration LATECOMER_INTERVAL = Duration.ofSeconds(1);

	private final ShardLayout layout;

	private final Map<String, Member> members;

	private final JobClient client;

	private final DataSource transactionDataSource;

	private final ShardWatch watch;

	private final ShardedJobAdmin admin;

	private volatile boolean running;

	/** The shards that did not answer at start-up, with why they were not migrated last time. */
	private final Map<String, RuntimeException> unmigrated = new ConcurrentHashMap<>();

	private @Nullable ScheduledExecutorService latecomers;

	/**
	 * @param spillUnkeyed whether a job without a shard or key that its shard fails to take is tried on
	 * the next shard up ({@code pgqueue.sharding.spill-unkeyed})
	 */
	QueueShards(ShardLayout layout, List<Member> members, boolean spillUnkeyed) {
		this.layout = layout;
		Map<String, Member> byName = new LinkedHashMap<>();
		members.forEach((member) -> byName.put(member.name(), member));
		members.stream()
			.filter((member) -> member.unmigrated() != null)
			.forEach((member) -> this.unmigrated.put(member.name(), Objects.requireNonNull(member.unmigrated())));
		this.members = byName;
		Map<String, DataSource> dataSources = new LinkedHashMap<>();
		members.forEach((member) -> dataSources.put(member.name(), member.dataSource()));
		this.watch = new ShardWatch(dataSources, WATCH_INTERVAL, WATCH_TIMEOUT);
		this.client = layout.client((shard) -> member(shard).dataSource(), (shard) -> member(shard).engine().client(),
				this.watch, spillUnkeyed);
		this.transactionDataSource = layout.transactionDataSource((shard) -> member(shard).dataSource());
		Map<String, QueueEngine> engines = new LinkedHashMap<>();
		members.forEach((member) -> engines.put(member.name(), member.engine()));
		this.admin = new ShardedJobAdmin(layout, engines, this.watch::whyDown);
	}

	/** The shards' names, in their declared order. */
	public List<String> names() {
		return this.layout.shards();
	}

	/** Which shard holds a key's jobs, and which shard a public id tells. */
	public ShardLayout layout() {
		return this.layout;
	}

	/** The engine of one shard: its pollers, its own client and admin. */
	public QueueEngine engine(String shard) {
		return member(shard).engine();
	}

	/** The DataSource of one shard's jobs table. */
	public DataSource dataSource(String shard) {
		return member(shard).dataSource();
	}

	/** The client that routes each new job to its shard; also the application's {@link JobClient} bean. */
	public JobClient client() {
		return this.client;
	}

	/**
	 * The admin over every shard: a job found and changed on the shard its id tells, lists merged, counts
	 * added up, pauses and retries on every shard; also the application's {@code JobAdmin} bean.
	 */
	public ShardedJobAdmin admin() {
		return this.admin;
	}

	/**
	 * A DataSource whose connections are those of the shard the caller's transaction is on. Inside a
	 * transactional job's listener that is the job's own batch connection, so what the listener writes
	 * through it commits or rolls back with the job, on the job's shard. It refuses to connect outside a
	 * transaction on a shard.
	 */
	public DataSource transactionDataSource() {
		return this.transactionDataSource;
	}

	/** The migrator of one shard's tables, which tells their schema and version. */
	QueueMigrator migrator(String shard) {
		return member(shard).migrator();
	}

	/** Why a shard counts as down, or {@code null} while it answers its probes. */
	public @Nullable String whyDown(String shard) {
		member(shard);
		return this.watch.whyDown(shard);
	}

	private Member member(String shard) {
		Member member = this.members.get(shard);
		if (member == null) {
			throw new IllegalArgumentException("No shard '" + shard + "'; the shards are " + names()
					+ " (pgqueue.shards)");
		}
		return member;
	}

	@Override
	public synchronized void start() {
		this.watch.start();
		List<QueueEngine> started = new ArrayList<>();
		try {
			for (Member member : this.members.values()) {
				if (this.unmigrated.containsKey(member.name())) {
					this.watch.holdDown(member.name(), notMigrated(this.unmigrated.get(member.name())));
				}
				else {
					member.engine().start();
					started.add(member.engine());
				}
			}
		}
		catch (RuntimeException ex) {
			started.forEach(QueueEngine::stop);
			this.watch.close();
			throw ex;
		}
		this.running = true;
		if (!this.unmigrated.isEmpty()) {
			this.unmigrated.forEach((shard, why) -> logger.warn("pgqueue starts without shard '{}', which did not "
					+ "answer ({}): its keyed jobs are refused until it answers, is migrated and its pollers start "
					+ "(pgqueue.sharding.start-while-down)", shard, why.getMessage()));
			this.latecomers = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "pgqueue-shard-latecomers");
				thread.setDaemon(true);
				return thread;
			});
			this.latecomers.scheduleWithFixedDelay(this::joinLatecomers, LATECOMER_INTERVAL.toMillis(),
					LATECOMER_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * Migrates each shard that did not answer at start-up, and once it is, starts its engine and lets
	 * it take jobs. A shard that still does not answer, or fails to start, is tried again next time:
	 * nothing thrown here may end the task.
	 */
	private void joinLatecomers() {
		for (String shard : List.copyOf(this.unmigrated.keySet())) {
			Member member = member(shard);
			try {
				member.migrator().afterPropertiesSet();
				synchronized (this) {
					if (!this.running) {
						return;
					}
					member.engine().start();
					this.unmigrated.remove(shard);
					this.watch.release(shard);
				}
				logger.info("pgqueue's shard '{}' answers and is migrated: its pollers run and it takes jobs", shard);
			}
			catch (RuntimeException ex) {
				this.unmigrated.put(shard, ex);
				this.watch.holdDown(shard, notMigrated(ex));
				logger.debug("pgqueue's shard '{}' could not join yet", shard, ex);
			}
		}
		synchronized (this) {
			if (this.unmigrated.isEmpty() && this.latecomers != null) {
				this.latecomers.shutdown();
				this.latecomers = null;
			}
		}
	}

	private static String notMigrated(RuntimeException why) {
		return "it did not answer at start-up, so its tables are not migrated and its pollers not started yet ("
				+ why.getMessage() + ")";
	}

	@Override
	public void stop() {
		synchronized (this) {
			this.running = false;
			if (this.latecomers != null) {
				this.latecomers.shutdownNow();
				this.latecomers = null;
			}
		}
		this.members.values().forEach((member) -> member.engine().stop());
		this.watch.close();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return QueueEngine.PHASE;
	}

	/** Closes the engines and the pools pgqueue created for shards given by connection settings. */
	@Override
	public void destroy() {
		synchronized (this) {
			if (this.latecomers != null) {
				this.latecomers.shutdownNow();
				this.latecomers = null;
			}
		}
		this.watch.close();
		for (Member member : this.members.values()) {
			try {
				member.engine().close();
			}
			catch (RuntimeException ex) {
				logger.warn("pgqueue could not close the engine of shard '{}'", member.name(), ex);
			}
			if (member.ownPool() != null) {
				try {
					member.ownPool().close();
				}
				catch (Exception ex) {
					logger.warn("pgqueue could not close the pool of shard '{}'", member.name(), ex);
				}
			}
		}
	}

	/**
	 * One shard.
	 * @param ownPool the pool pgqueue created for it, closed with the shards; {@code null} for a bean
	 * @param unmigrated why it could not be migrated at start-up, where the application starts without
	 * it; {@code null} once migrated
	 */
	record Member(String name, DataSource dataSource, QueueEngine engine, QueueMigrator migrator,
			@Nullable AutoCloseable ownPool, @Nullable RuntimeException unmigrated) {
	}

}
