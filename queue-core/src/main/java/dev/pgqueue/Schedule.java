package dev.pgqueue;

import java.time.ZoneId;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.support.CronExpression;

/**
 * A recurring job: a cron expression, the time zone it reads in, and the job each tick enqueues.
 *
 * <pre>{@code
 * schedules.save(Schedule.of("nightly-report", "0 0 2 * * *", "report.nightly")
 *     .zone(ZoneId.of("Europe/Paris"))
 *     .payload(Map.of("format", "pdf"))
 *     .missed(MissedTicks.LATEST)
 *     .overlap(Overlap.SKIP));
 * }</pre>
 *
 * <p>The cron expression is Spring's {@link CronExpression}: six fields (second, minute, hour, day of
 * month, month, day of week) or a macro such as {@code @hourly}, {@code @daily}, {@code @weekly}.
 * Everything is checked when the schedule is built, with a message that names the schedule.
 */
public final class Schedule {

	/** Longest schedule name accepted. */
	public static final int MAX_NAME_LENGTH = 200;

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]*");

	private final String name;

	private final String cron;

	private final CronExpression expression;

	private final String kind;

	private ZoneId zone = ZoneId.of("UTC");

	private @Nullable String queue;

	private @Nullable Object payload;

	private MissedTicks missed = MissedTicks.LATEST;

	private Overlap overlap = Overlap.ALLOW;

	private Schedule(String name, String cron, String kind) {
		this.name = requireName(name);
		if (cron == null || cron.isBlank()) {
			throw new IllegalArgumentException("Schedule '" + name + "' has no cron expression. Give one of six fields "
					+ "(second minute hour day-of-month month day-of-week), such as \"0 0 2 * * *\", or a macro such "
					+ "as @hourly.");
		}
		JobRequest.requireStorable("The cron expression of schedule '" + name + "'", cron);
		try {
			this.expression = CronExpression.parse(cron.strip());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Schedule '" + name + "' has an invalid cron expression \"" + cron + "\": "
					+ ex.getMessage() + ". Use six fields (second minute hour day-of-month month day-of-week), such as "
					+ "\"0 0 2 * * *\" for 02:00 every day, or a macro such as @hourly.", ex);
		}
		this.cron = cron.strip();
		if (kind == null || kind.isBlank()) {
			throw new IllegalArgumentException("Schedule '" + name + "' has no job kind. Name the kind of the job each "
					+ "tick enqueues, as a @JobListener names it.");
		}
		this.kind = kind;
	}

	/**
	 * A schedule that enqueues a job of {@code kind} on every tick of {@code cron}, read in UTC unless
	 * {@link #zone(ZoneId)} says otherwise.
	 * @param name unique among the schedules sharing the jobs table: letters, digits, {@code . _ : -}
	 */
	public static Schedule of(String name, String cron, String kind) {
		return new Schedule(name, cron, kind);
	}

	/** The time zone the cron expression reads in; UTC by default. */
	public Schedule zone(ZoneId zone) {
		this.zone = Objects.requireNonNull(zone, "zone must not be null");
		return this;
	}

	/** The time zone by its id, such as {@code Europe/Paris}; a clear error names the schedule if unknown. */
	public Schedule zone(String zone) {
		try {
			return zone(ZoneId.of(zone));
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Schedule '" + this.name + "' has an unknown time zone '" + zone
					+ "'. Use a region id such as Europe/Paris or America/New_York, or UTC.", ex);
		}
	}

	/** The queue of the job each tick enqueues; by default the queue of the kind's listener, else {@code default}. */
	public Schedule queue(@Nullable String queue) {
		this.queue = queue;
		return this;
	}

	/** The payload of the job each tick enqueues, serialized to JSON as an enqueue's is; JSON null by default. */
	public Schedule payload(@Nullable Object payload) {
		this.payload = payload;
		return this;
	}

	/** What to do with ticks that fell due while no instance ran the schedule; {@link MissedTicks#LATEST} by default. */
	public Schedule missed(MissedTicks missed) {
		this.missed = Objects.requireNonNull(missed, "missed must not be null");
		return this;
	}

	/** Whether a tick fires while the previous tick's job is unfinished; {@link Overlap#ALLOW} by default. */
	public Schedule overlap(Overlap overlap) {
		this.overlap = Objects.requireNonNull(overlap, "overlap must not be null");
		return this;
	}

	public String name() {
		return this.name;
	}

	public String cron() {
		return this.cron;
	}

	/** The parsed cron expression. */
	public CronExpression expression() {
		return this.expression;
	}

	public String kind() {
		return this.kind;
	}

	public ZoneId zone() {
		return this.zone;
	}

	public @Nullable String queue() {
		return this.queue;
	}

	public @Nullable Object payload() {
		return this.payload;
	}

	public MissedTicks missed() {
		return this.missed;
	}

	public Overlap overlap() {
		return this.overlap;
	}

	/** Checks a schedule's name; the error says what a name may hold. */
	public static String requireName(@Nullable String name) {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("A schedule needs a name");
		}
		if (name.length() > MAX_NAME_LENGTH || !NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Schedule name '" + name + "' is not valid: use up to " + MAX_NAME_LENGTH
					+ " letters, digits, '.', '_', ':' and '-', starting with a letter or digit.");
		}
		return name;
	}

	@Override
	public String toString() {
		return "Schedule[" + this.name + ", \"" + this.cron + "\" " + this.zone + ", kind=" + this.kind + "]";
	}

}
