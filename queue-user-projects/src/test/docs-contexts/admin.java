// The JobAdmin bean, and the id of a job.
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.RetryOptions;

abstract class Context {

	JobAdmin admin;

	UUID id;

}
