// The JobSchedules bean.
import dev.pgqueue.JobSchedules;
import dev.pgqueue.Overlap;
import dev.pgqueue.Schedule;

abstract class Context {

	JobSchedules schedules;

}
