package dev.pgqueue.benchmark.userpath;

import java.util.concurrent.atomic.LongAdder;

import dev.pgqueue.JobListener;

import org.springframework.stereotype.Component;

/** Does nothing with each job but count it, so that what is measured is pgqueue's path alone. */
@Component
class NoopListener {

	/** A LongAdder, not an AtomicLong: sixteen workers incrementing one counter would contend on it. */
	private final LongAdder handled = new LongAdder();

	@JobListener(kind = UserPathApplication.KIND, queue = UserPathApplication.QUEUE)
	void handle(Noop noop) {
		this.handled.increment();
	}

	long handled() {
		return this.handled.sum();
	}

}
