package dev.pgqueue.engine.job;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.pgqueue.JobEvent;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Where the engine publishes {@link JobEvent}s: the application's listener, shielded so that a
 * listener that throws is logged and changes nothing. {@link #NONE} publishes nothing and builds no
 * event at all.
 */
public final class JobEvents {

	private static final Logger logger = LoggerFactory.getLogger(JobEvents.class);

	/** Publishes nothing. */
	public static final JobEvents NONE = new JobEvents(null);

	private final @Nullable Consumer<JobEvent> listener;

	private JobEvents(@Nullable Consumer<JobEvent> listener) {
		this.listener = listener;
	}

	/** Events handed to {@code listener}; {@link #NONE} for {@code null}. */
	public static JobEvents to(@Nullable Consumer<JobEvent> listener) {
		return (listener != null) ? new JobEvents(listener) : NONE;
	}

	/** Whether events are published at all; when not, callers need not build them. */
	public boolean enabled() {
		return this.listener != null;
	}

	/** Publishes the event now; builds it only when events are published. */
	public void publish(Supplier<JobEvent> event) {
		if (this.listener != null) {
			deliver(event.get());
		}
	}

	/**
	 * Publishes the events once the current transaction commits (never if it rolls back), or now when
	 * no transaction is active.
	 */
	public void publishAfterCommit(Supplier<List<? extends JobEvent>> events) {
		if (this.listener == null) {
			return;
		}
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			events.get().forEach(this::deliver);
			return;
		}
		pending().events.addAll(events.get());
	}

	/** This publisher's events waiting for the current transaction, registered by the first. */
	private Pending pending() {
		for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
			if (synchronization instanceof Pending pending && pending.owner() == this) {
				return pending;
			}
		}
		Pending created = new Pending();
		TransactionSynchronizationManager.registerSynchronization(created);
		return created;
	}

	private void deliver(JobEvent event) {
		try {
			this.listener.accept(event);
		}
		catch (RuntimeException ex) {
			logger.warn("A listener of pgqueue's job events threw on {} of job {} (kind '{}', queue '{}'); the job is "
					+ "not affected: {}", event.getClass().getSimpleName(), event.id(), event.kind(), event.queue(),
					ex.toString(), ex);
		}
	}

	private final class Pending implements TransactionSynchronization {

		private final List<JobEvent> events = new ArrayList<>();

		JobEvents owner() {
			return JobEvents.this;
		}

		@Override
		public void afterCommit() {
			this.events.forEach(JobEvents.this::deliver);
		}

	}

}
