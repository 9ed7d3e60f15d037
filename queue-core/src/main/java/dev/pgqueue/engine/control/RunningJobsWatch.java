package dev.pgqueue.engine.control;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.pgqueue.engine.control.RunningJobs.Progress;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.sql.ControlRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * Once a second, for the jobs running in this application: stops those an operator asked to cancel
 * (the polling fallback of the notification, which usually came first), writes the progress their
 * listeners reported since the last write (each job at most every
 * {@link RunningJobs#PROGRESS_INTERVAL_NANOS}), and deletes the control rows of the jobs that ended;
 * about once a minute, also those of jobs that ended elsewhere without theirs being deleted (a
 * crashed instance, a cancel that came after the end). Costs nothing else while no job runs.
 */
public final class RunningJobsWatch extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(RunningJobsWatch.class);

	/** How often the watch runs: the longest a cancel waits when its notification was lost. */
	public static final Duration INTERVAL = Duration.ofSeconds(1);

	private final RunningJobs running;

	private final ControlRepository controls;

	/** Passes until the next prune of rows no instance deleted (a job that ended on a crashed one). */
	private int untilPrune;

	/** Passes between two prunes: about a minute. */
	private static final int PRUNE_EVERY = 60;

	public RunningJobsWatch(RunningJobs running, ControlRepository controls) {
		this(running, controls, INTERVAL);
	}

	public RunningJobsWatch(RunningJobs running, ControlRepository controls, Duration interval) {
		super("running-jobs watch", interval);
		this.running = running;
		this.controls = controls;
	}

	@Override
	protected void runOnce() {
		try {
			watch();
		}
		catch (DataAccessException ex) {
			logger.debug("Could not read cancel requests or write progress; trying again in {}: {}", interval(),
					ex.toString());
		}
	}

	/** One pass: cancels, progress, ended jobs' rows. */
	public void watch() {
		if (!this.running.isEmpty()) {
			Map<Long, String> requested = this.controls.cancelRequests(this.running.ids());
			requested.forEach(this.running::cancel);
			List<Progress> progress = this.running.progressDue(System.nanoTime());
			if (!progress.isEmpty()) {
				Long[] ids = new Long[progress.size()];
				Integer[] percents = new Integer[progress.size()];
				String[] messages = new String[progress.size()];
				for (int i = 0; i < ids.length; i++) {
					ids[i] = progress.get(i).id();
					percents[i] = progress.get(i).percent();
					messages[i] = progress.get(i).message();
				}
				this.controls.writeProgress(ids, percents, messages);
			}
		}
		Long[] ended = this.running.takeEnded();
		if (ended.length > 0) {
			this.controls.delete(ended);
		}
		if (--this.untilPrune <= 0) {
			this.untilPrune = PRUNE_EVERY;
			this.controls.pruneEnded();
		}
	}

}
