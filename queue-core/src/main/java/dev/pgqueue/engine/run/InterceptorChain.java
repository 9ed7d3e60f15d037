package dev.pgqueue.engine.run;

import java.util.List;

import dev.pgqueue.Job;
import dev.pgqueue.JobContext;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandler.Returned;

/**
 * The rest of an attempt from one interceptor on: each {@link JobInterceptor}, outermost first, then
 * the listener. An interceptor that calls {@link #proceed()} twice is refused: an attempt runs its
 * listener once.
 */
final class InterceptorChain implements JobInterceptor.Invocation {

	private final List<JobInterceptor> interceptors;

	private final JobHandler handler;

	private final Job job;

	private final JobContext context;

	private final Returned[] result;

	private final int next;

	private boolean proceeded;

	private InterceptorChain(List<JobInterceptor> interceptors, JobHandler handler, Job job, JobContext context,
			Returned[] result, int next) {
		this.interceptors = interceptors;
		this.handler = handler;
		this.job = job;
		this.context = context;
		this.result = result;
		this.next = next;
	}

	/** Runs the listener through the interceptors; returns what the listener returned. */
	static Returned run(List<JobInterceptor> interceptors, JobHandler handler, Job job, JobContext context)
			throws Throwable {
		Returned[] result = { Returned.NOTHING };
		new InterceptorChain(interceptors, handler, job, context, result, 0).proceed();
		return result[0];
	}

	@Override
	public void proceed() throws Throwable {
		if (this.proceeded) {
			throw new IllegalStateException("A JobInterceptor called proceed() twice for job " + this.job.id()
					+ " (kind '" + this.job.kind() + "'); an attempt runs its listener once");
		}
		this.proceeded = true;
		if (this.next == this.interceptors.size()) {
			this.result[0] = this.handler.handleForResult(this.job, this.context);
		}
		else {
			this.interceptors.get(this.next)
				.intercept(this.job, new InterceptorChain(this.interceptors, this.handler, this.job, this.context,
						this.result, this.next + 1));
		}
	}

}
