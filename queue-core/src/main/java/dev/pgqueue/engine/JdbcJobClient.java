package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.job.NewJob;

/**
 * The {@link JobClient} of one database: each request made into a row with the queue's defaults and the
 * enqueue's checks, inserted in the caller's transaction and announced once it commits, all by
 * {@link JobBirths}, where the schedules' jobs are born too.
 *
 * <p>Public ids are made here ({@link NewJobs}: random version 4 UUIDs, or ids that tell their shard)
 * rather than by the database, so a many-job enqueue needs no {@code RETURNING} and keeps the requests'
 * order.
 *
 * <p>It also warns, through {@link UnpolledQueueWarnings}, about a job that no instance will run.
 */
class JdbcJobClient implements JobClient {

	/** Makes, inserts and announces the jobs. */
	private final JobBirths births;

	private final UnpolledQueueWarnings unpolled;

	private final EnqueueSize size;

	/**
	 * @param births where the jobs are made from the requests, inserted and announced
	 * @param unpolled warns about jobs that no instance will run
	 * @param size the largest {@code enqueueAll} taken
	 */
	JdbcJobClient(JobBirths births, UnpolledQueueWarnings unpolled, EnqueueSize size) {
		this.births = births;
		this.unpolled = unpolled;
		this.size = size;
	}

	@Override
	public UUID enqueue(JobRequest request) {
		NewJob job = this.births.of(request);
		UUID id = this.births.insert(List.of(job)).get(0).publicId();
		this.unpolled.enqueued(job.kind(), job.queue(), request.queue() != null);
		return id;
	}

	@Override
	public List<UUID> enqueueAll(List<JobRequest> requests) {
		this.size.check(requests);
		List<NewJob> jobs = new ArrayList<>(requests.size());
		for (JobRequest request : requests) {
			jobs.add(this.births.of(request));
		}
		List<UUID> ids = new ArrayList<>(jobs.size());
		this.births.insert(jobs).forEach((enqueued) -> ids.add(enqueued.publicId()));
		for (int i = 0; i < jobs.size(); i++) {
			this.unpolled.enqueued(jobs.get(i).kind(), jobs.get(i).queue(), requests.get(i).queue() != null);
		}
		return ids;
	}

}
