package dev.pgqueue.metrics;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;

/** Gauge values of one queue, held strongly here because Micrometer only holds them weakly. */
final class QueueGauges {

	final AtomicLong depth = new AtomicLong();

	final AtomicLong scheduled = new AtomicLong();

	final AtomicLong running = new AtomicLong();

	final AtomicLong oldestAgeMillis = new AtomicLong();

	final AtomicLong pollCycleAssessment = new AtomicLong();

	final AtomicLong abandonedHandlers = new AtomicLong();

	final AtomicLong paused = new AtomicLong();

	final AtomicLong unpolledJobs = new AtomicLong();

	QueueGauges(MeterRegistry registry, String queue) {
		Gauge.builder("pgqueue.poll.cycle.assessment", this.pollCycleAssessment, AtomicLong::get)
			.description("The recent poll-cycle p99 judged: 0 healthy (< 30 ms), 1 degrading (< 100 ms), "
					+ "2 trouble (< 500 ms), 3 broken")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.queue.depth", this.depth, AtomicLong::get)
			.description("Due jobs waiting for a worker")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.queue.scheduled", this.scheduled, AtomicLong::get)
			.description("Jobs waiting for their run-at (delayed jobs and retries)")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.queue.running", this.running, AtomicLong::get)
			.description("Leased jobs being run")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.handlers.abandoned", this.abandonedHandlers, AtomicLong::get)
			.description("Leased listeners still running past their time limit on threads their workers left")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.queue.paused", this.paused, AtomicLong::get)
			.description("1 while an operator has paused the queue: no instance claims its jobs")
			.tag("queue", queue)
			.register(registry);
		Gauge.builder("pgqueue.queue.unpolled.jobs", this.unpolledJobs, AtomicLong::get)
			.description("Jobs waiting (due or scheduled) in the queue while no instance polls it: nobody runs "
					+ "them until one does")
			.tag("queue", queue)
			.register(registry);
		TimeGauge.builder("pgqueue.queue.oldest.age", this.oldestAgeMillis, TimeUnit.MILLISECONDS, AtomicLong::get)
			.description("How long the oldest due job has waited")
			.tag("queue", queue)
			.register(registry);
	}

}
