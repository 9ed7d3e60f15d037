package dev.pgqueue.engine.status;

import java.util.List;
import java.util.Map;

import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.metrics.VacuumHealth;
import org.jspecify.annotations.Nullable;

/**
 * One database's part of the engine, as its stats reader last read it and its pollers and services
 * stand now.
 * @param shard the shard it is, or {@code null} for the engine's one database
 * @param whyDown why the shard counts as down, or {@code null} while it answers
 * @param slots how many of the key space's slots the shard owns; 0 on one database
 * @param processing whether jobs run here: without, no poller, no service but the polling heartbeat,
 * and none of the readings below
 * @param deletesCompleted whether a completed job's row is deleted at once, leaving nothing to count
 * @param queues every queue it knows of (polled here, read in its table, or paused), by name
 * @param lockWaits this application's connections that wait on a lock
 * @param oldestTransaction the oldest snapshot held on the database
 * @param unpolledQueues queues with due jobs that no instance polls
 * @param vacuum whether the jobs table gets vacuumed; {@code null} before the first reading
 * @param preparedTransactions the prepared transactions of two-phase queues; {@code null} without them
 * @param services the background services, in their start order
 */
public record DatabaseStatus(@Nullable String shard, @Nullable String whyDown, int slots, boolean processing,
		boolean deletesCompleted, 		Map<String, QueueStatus> queues, LockWaits lockWaits, OldestTransaction oldestTransaction,
		Map<String, QueueStats> unpolledQueues, @Nullable VacuumHealth vacuum,
		@Nullable PreparedTransactions preparedTransactions, List<ServiceStatus> services) {

	/** The same part, as the shards' watch sees it now. */
	public DatabaseStatus onShard(@Nullable String whyDown, int slots) {
		return new DatabaseStatus(this.shard, whyDown, slots, this.processing, this.deletesCompleted, this.queues, this.lockWaits,
				this.oldestTransaction, this.unpolledQueues, this.vacuum, this.preparedTransactions, this.services);
	}

	/**
	 * A long-running part: whether it runs, how its loop fares.
	 * @param name what it does, as its threads are named
	 * @param failures iterations of its loop that failed, each survived
	 * @param stoppedBy what ended its thread on its own, or {@code null}: a service so stopped does
	 * not do its work until the application restarts
	 */
	public record ServiceStatus(String name, boolean running, long failures, @Nullable String stoppedBy) {

		static ServiceStatus of(EngineService service) {
			ServiceHealth health = service.health();
			return new ServiceStatus(service.name(), service.isRunning(), health.failures(), health.stoppedBy());
		}

	}

	/** The services that ended on their own: their work is not done. */
	public List<ServiceStatus> stoppedServices() {
		return this.services.stream().filter((service) -> service.stoppedBy() != null).toList();
	}

}
