package dev.pgqueue.benchmark;

import java.io.PrintStream;
import java.util.List;

/** One workload of the benchmark: runs pgqueue and its baseline in a fresh schema of its own. */
interface Workload {

	/** Short name, used on the command line and in the results. */
	String name();

	List<Result> run(Context context) throws Exception;

	/** What every workload gets. */
	record Context(BenchDatabase database, Profile profile, PrintStream log) {

		void progress(String format, Object... args) {
			this.log.printf("  " + format + "%n", args);
			this.log.flush();
		}

	}

}
