package dev.pgqueue.benchmark.userpath;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What the JVM spent over a window: its CPU time, split by Java thread group, and the time its JIT
 * compilers and garbage collectors took. Threads are grouped by name with the numbers taken out
 * ({@code pgqueue-bench-3} counts as {@code pgqueue-bench-N}); what the process used beyond its Java
 * threads is the JVM's own ({@code jvm-internal}: JIT compiler and GC threads, JFR's sampler). JIT
 * time inside the window says whether the warm-up was long enough.
 */
final class JvmWindow {

	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	private final long processCpu = processCpuNanos();

	private final Map<Long, Long> threadCpu = threadCpu();

	private final long jitMillis = jitMillis();

	private final long[] gc = gc();

	/**
	 * Closes the window, as fields of one protocol line: {@code cpu} (nanoseconds, -1 when unknown),
	 * {@code jit} (milliseconds of compilation), {@code gcCount}, {@code gcMs} and {@code threads}
	 * ({@code group=nanos;…}, biggest first).
	 */
	String close() {
		long cpu = (this.processCpu >= 0) ? processCpuNanos() - this.processCpu : -1;
		long jit = (this.jitMillis >= 0) ? jitMillis() - this.jitMillis : -1;
		long[] gcNow = gc();
		return "cpu=%d jit=%d gcCount=%d gcMs=%d threads=%s".formatted(cpu, jit, gcNow[0] - this.gc[0],
				gcNow[1] - this.gc[1], threadGroups(cpu));
	}

	private String threadGroups(long processNanos) {
		Map<String, Long> groups = new HashMap<>();
		long javaThreads = 0;
		for (Map.Entry<Long, Long> thread : threadCpu().entrySet()) {
			var info = THREADS.getThreadInfo(thread.getKey());
			if (info == null) {
				continue;
			}
			long used = thread.getValue() - this.threadCpu.getOrDefault(thread.getKey(), 0L);
			javaThreads += used;
			groups.merge(info.getThreadName().replaceAll("\\d+", "N").replaceAll("[ =;]", "_"), used, Long::sum);
		}
		// Threads that ended inside the window take their time with them: rare here (pools keep theirs).
		groups.put("jvm-internal", processNanos - javaThreads);
		return groups.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
			.map((group) -> group.getKey() + "=" + group.getValue())
			.collect(Collectors.joining(";"));
	}

	/** CPU time of this whole JVM (every thread, GC and JIT included), in nanoseconds. */
	static long processCpuNanos() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return -1;
	}

	private static Map<Long, Long> threadCpu() {
		Map<Long, Long> times = new LinkedHashMap<>();
		for (long id : THREADS.getAllThreadIds()) {
			long nanos = THREADS.getThreadCpuTime(id);
			if (nanos >= 0) {
				times.put(id, nanos);
			}
		}
		return times;
	}

	private static long jitMillis() {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		return (jit != null && jit.isCompilationTimeMonitoringSupported()) ? jit.getTotalCompilationTime() : -1;
	}

	/** Collections and milliseconds spent in them, over every collector. */
	private static long[] gc() {
		long[] totals = new long[2];
		for (GarbageCollectorMXBean collector : ManagementFactory.getGarbageCollectorMXBeans()) {
			totals[0] += Math.max(0, collector.getCollectionCount());
			totals[1] += Math.max(0, collector.getCollectionTime());
		}
		return totals;
	}

}
