package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import org.jspecify.annotations.Nullable;

/**
 * The pollers of one database: those its {@link DatabaseEngine} makes on start, one per queue with
 * listeners, and those tests and benchmarks make by hand to run several pollers of one queue, as
 * several instances would. Each is made for the kinds registered in its queue and woken with the
 * others when its queue has new jobs; they stop together.
 *
 * <p>Kept apart from {@link DatabaseEngine}, which decides when pollers are made and stopped, so that
 * how a poller is made and how a set of them stops changes here alone.
 */
final class DatabasePollers {

	private final JobPollerFactory factory;

	private final JobHandlerRegistry handlers;

	private final PollerWakeUps wakeUps;

	private final List<JobPoller> pollers = new ArrayList<>();

	DatabasePollers(JobPollerFactory factory, JobHandlerRegistry handlers, PollerWakeUps wakeUps) {
		this.factory = factory;
		this.handlers = handlers;
		this.wakeUps = wakeUps;
	}

	/**
	 * A new, unstarted poller of the queue for the kinds registered in it, woken with the others, that
	 * asks {@code pauses} whether its queue is paused (never when {@code null}).
	 */
	synchronized JobPoller make(String queue, @Nullable QueuePauses pauses) {
		JobPoller poller = this.factory.create(queue, this.handlers.kindsOf(queue), pauses);
		this.pollers.add(poller);
		this.wakeUps.register(poller);
		return poller;
	}

	/** Every poller made so far, started or not. */
	synchronized List<JobPoller> all() {
		return List.copyOf(this.pollers);
	}

	/** The pollers that run now. */
	synchronized List<JobPoller> running() {
		return this.pollers.stream().filter(JobPoller::isRunning).toList();
	}

	/**
	 * Stops the pollers all at once, each given its shutdown timeout to let its running jobs finish,
	 * and calls {@code then} once the last has stopped (at once when there are none).
	 */
	static void stopTogether(List<JobPoller> pollers, Runnable then) {
		if (pollers.isEmpty()) {
			then.run();
			return;
		}
		AtomicInteger left = new AtomicInteger(pollers.size());
		for (JobPoller poller : pollers) {
			poller.stop(() -> {
				if (left.decrementAndGet() == 0) {
					then.run();
				}
			});
		}
	}

}
