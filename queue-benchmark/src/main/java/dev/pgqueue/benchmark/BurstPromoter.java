package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;

/**
 * The engine's promoter on its own connection, ticking at the default promote interval as every
 * application's background services do, for pgqueue and the raw loops alike. Its first tick is
 * when the burst falls due: in production the next tick comes anywhere up to an interval later,
 * a wait that would only add noise to both sides here. (Just after, not at: a tick a moment early
 * would find nothing due.)
 */
final class BurstPromoter implements AutoCloseable {

	private static final Duration FIRST_TICK_AFTER_DUE = Duration.ofMillis(20);

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "burst-promoter");
		thread.setDaemon(true);
		return thread;
	});

	/** An application's engine on the promoter's pool, notifying the jobs it promotes. */
	private final QueueEngine engine;

	BurstPromoter(DataSource pool, BenchSchema schema, long dueNanos) {
		this.engine = QueueEngine.builder(pool).settings(EngineSettings.defaults(schema.name())).build();
		Promoter promoter = this.engine.database().promoter();
		long interval = MaintenanceSettings.DEFAULT.promoteInterval().toMillis();
		this.timer.scheduleWithFixedDelay(() -> {
			try {
				promoter.promote();
			}
			catch (RuntimeException ex) {
				// As the engine's own timer does: try again on the next tick.
			}
		}, Math.max(0, dueNanos + FIRST_TICK_AFTER_DUE.toNanos() - System.nanoTime()),
				TimeUnit.MILLISECONDS.toNanos(interval), TimeUnit.NANOSECONDS);
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
		try {
			this.timer.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.engine.close();
	}

}
