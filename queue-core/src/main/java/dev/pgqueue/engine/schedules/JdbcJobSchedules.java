package dev.pgqueue.engine.schedules;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.pgqueue.JobRequest;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.Schedule;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.service.LogValues;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.sql.ScheduleRepository;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@link JobSchedules} on the {@code pgqueue_schedules} table. The first tick of a new schedule (or of
 * one whose expression or zone changed) is the first after the database's clock now.
 */
public final class JdbcJobSchedules implements JobSchedules {

	private static final Logger logger = LoggerFactory.getLogger(JdbcJobSchedules.class);

	private final ScheduleRepository repository;

	/** Where a job run now is born, as every new job is. */
	private final ScheduleJobs jobs;

	private final JsonMapper jsonMapper;

	private final QueueCatalog queues;

	private final Function<String, @Nullable String> listenerQueue;

	private final Supplier<String> caller;

	/**
	 * @param listenerQueue the queue of this application's listener for a kind, or {@code null}
	 * @param caller who changes schedules here, recorded as who paused one
	 */
	public JdbcJobSchedules(ScheduleRepository repository, ScheduleJobs jobs, JsonMapper jsonMapper, QueueCatalog queues,
			Function<String, @Nullable String> listenerQueue, Supplier<String> caller) {
		this.repository = repository;
		this.jobs = jobs;
		this.jsonMapper = jsonMapper;
		this.queues = queues;
		this.listenerQueue = listenerQueue;
		this.caller = caller;
	}

	@Override
	public ScheduleDetails save(Schedule schedule) {
		return save(schedule, false);
	}

	/**
	 * Saves a schedule declared in configuration: marked as declared, and logged when it changed.
	 */
	public ScheduleDetails saveDeclared(Schedule schedule) {
		return save(schedule, true);
	}

	private ScheduleDetails save(Schedule schedule, boolean declared) {
		String queue = schedule.queue();
		if (queue == null) {
			String resolved = this.listenerQueue.apply(schedule.kind());
			queue = (resolved != null) ? resolved : JobRequest.DEFAULT_QUEUE;
		}
		String payload;
		try {
			payload = this.jsonMapper.writeValueAsString(schedule.payload());
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("The payload of schedule '" + schedule.name() + "' cannot be serialized "
					+ "to JSON: " + ex.getOriginalMessage() + ". Pass a record, bean, map or other value Jackson can write.",
					ex);
		}
		this.jobs.check(schedule.name(), schedule.kind(), queue, payload);
		CronTicks ticks = new CronTicks(schedule.expression(), schedule.zone());
		Instant now = this.repository.now();
		Instant first = ticks.next(now);
		if (first == null) {
			throw new IllegalArgumentException("Schedule '" + schedule.name() + "' never fires: its cron expression \""
					+ schedule.cron() + "\" has no tick after " + now + ". Check its day of month and month.");
		}
		Optional<ScheduleDetails> written = this.repository.save(schedule.name(), schedule.cron(), schedule.zone(),
				schedule.kind(), queue, payload, schedule.missed(), schedule.overlap(), first, declared);
		if (written.isPresent()) {
			logger.info("Schedule '{}' saved{}: \"{}\" in {}, a '{}' job in queue '{}', next tick {}", schedule.name(),
					declared ? " from configuration" : " by " + this.caller.get(), schedule.cron(), schedule.zone(),
					schedule.kind(), written.get().queue(), written.get().nextTick());
			return written.get();
		}
		return this.repository.get(schedule.name()).orElseThrow();
	}

	@Override
	public Optional<ScheduleDetails> get(String name) {
		return couldExist(name) ? this.repository.get(name) : Optional.empty();
	}

	/**
	 * Whether a schedule could have this name: one no schedule can have (U+0000 in it, say, which the
	 * statement would fail on) names none, and is not sent to the database.
	 */
	private static boolean couldExist(String name) {
		try {
			Schedule.requireName(name);
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

	@Override
	public List<ScheduleDetails> list() {
		return this.repository.list();
	}

	@Override
	public boolean pause(String name) {
		if (!couldExist(name)) {
			return false;
		}
		String by = this.caller.get();
		boolean paused = this.repository.pause(name, by);
		if (paused) {
			logger.info("Schedule '{}' paused by {}: its ticks do not fire until it is resumed", name, by);
		}
		return paused;
	}

	@Override
	public boolean resume(String name) {
		if (!couldExist(name)) {
			return false;
		}
		boolean resumed = this.repository.resume(name);
		if (resumed) {
			logger.info("Schedule '{}' resumed by {}; ticks missed meanwhile go by its missed policy", name,
					this.caller.get());
		}
		return resumed;
	}

	@Override
	public UUID runNow(String name) {
		ScheduleDetails schedule = get(name)
			.orElseThrow(() -> new IllegalArgumentException("No schedule is named '" + LogValues.printable(name) + "'"));
		NewJob job = this.jobs.of(schedule, null, null);
		this.jobs.insert(List.of(job));
		this.repository.recordJob(name, job.publicId());
		logger.info("Schedule '{}' run now by {}: job {} (kind '{}', queue '{}')", name, this.caller.get(),
				job.publicId(), schedule.kind(), schedule.queue());
		return job.publicId();
	}

	@Override
	public boolean delete(String name) {
		if (!couldExist(name)) {
			return false;
		}
		boolean deleted = this.repository.delete(name);
		if (deleted) {
			logger.info("Schedule '{}' deleted by {}; its jobs already enqueued stay", name, this.caller.get());
		}
		return deleted;
	}

	/** Names of running schedules whose next tick fell due more than {@code grace} ago. */
	public List<String> overdue(Duration grace) {
		return this.repository.overdue(grace);
	}

}
