package dev.pgqueue.autoconfigure;

import java.util.Map;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.MissedTicks;
import dev.pgqueue.Overlap;
import dev.pgqueue.Schedule;

/** One recurring job. */
public class QueueScheduleProperties {

	/**
	 * Spring's cron expression: six fields (second minute hour day-of-month month day-of-week), such
	 * as "0 0 2 * * *", or a macro such as @hourly.
	 */
	private String cron;

	/** Time zone the expression reads in, such as Europe/Paris. */
	private String zone = "UTC";

	/** Kind of the job each tick enqueues. */
	private String kind;

	/** Queue of that job; by default the queue of the kind's listener, else "default". */
	private String queue;

	/**
	 * Payload of that job, a JSON object written as keys under payload (strings, numbers, booleans,
	 * nested objects; a list becomes an object keyed 0, 1, ...). For a payload that is not an
	 * object, save the schedule through JobSchedules.
	 */
	private Map<String, Object> payload;

	/** What to do with ticks missed while no instance ran: latest, all or none. */
	private MissedTicks missed = MissedTicks.LATEST;

	/** Whether a tick fires while the previous tick's job is unfinished: allow or skip. */
	private Overlap overlap = Overlap.ALLOW;

	Schedule toSchedule(String name) {
		String prefix = "pgqueue.schedules." + name + ".";
		if (this.kind == null || this.kind.isBlank()) {
			throw new InvalidQueueConfigurationException(prefix + "kind", "Schedule '" + name + "' has no kind",
					"Set " + prefix + "kind to the kind of job each tick enqueues, as its @JobListener names it.");
		}
		if (this.cron == null || this.cron.isBlank()) {
			throw new InvalidQueueConfigurationException(prefix + "cron", "Schedule '" + name + "' has no cron expression",
					"Set " + prefix + "cron, such as \"0 0 2 * * *\" (02:00 every day) or @hourly.");
		}
		Schedule schedule;
		try {
			schedule = Schedule.of(name, this.cron, this.kind);
		}
		catch (IllegalArgumentException ex) {
			String key = ex.getMessage().startsWith("Schedule name") ? "pgqueue.schedules." + name : prefix + "cron";
			throw new InvalidQueueConfigurationException(key, ex.getMessage(), "Fix " + key + ".");
		}
		try {
			schedule.zone(this.zone);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidQueueConfigurationException(prefix + "zone", ex.getMessage(), "Fix " + prefix + "zone.");
		}
		return schedule.queue(this.queue).payload(this.payload).missed(this.missed).overlap(this.overlap);
	}

	public String getCron() {
		return this.cron;
	}

	public void setCron(String cron) {
		this.cron = cron;
	}

	public String getZone() {
		return this.zone;
	}

	public void setZone(String zone) {
		this.zone = zone;
	}

	public String getKind() {
		return this.kind;
	}

	public void setKind(String kind) {
		this.kind = kind;
	}

	public String getQueue() {
		return this.queue;
	}

	public void setQueue(String queue) {
		this.queue = queue;
	}

	public Map<String, Object> getPayload() {
		return this.payload;
	}

	public void setPayload(Map<String, Object> payload) {
		this.payload = payload;
	}

	public MissedTicks getMissed() {
		return this.missed;
	}

	public void setMissed(MissedTicks missed) {
		this.missed = missed;
	}

	public Overlap getOverlap() {
		return this.overlap;
	}

	public void setOverlap(Overlap overlap) {
		this.overlap = overlap;
	}

}
