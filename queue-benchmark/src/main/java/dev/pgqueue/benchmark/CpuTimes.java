package dev.pgqueue.benchmark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * CPU time read from Linux's {@code /proc}: of the processes this JVM started and waited for, and
 * of the PostgreSQL server, summed over every process named {@code postgres}. The server's figure
 * only means something when the server runs on this machine; elsewhere no such process is seen and
 * the figure is reported as unknown.
 *
 * <p>Figures from {@code /proc/<pid>/stat} are in clock ticks (10 ms on most systems): fine for
 * drains that take seconds, coarse for a smoke run.
 */
final class CpuTimes {

	/** Application names of the benchmark's own connections start with this; other sessions do not. */
	static final String OUR_APPLICATIONS = "pgqueue-bench";

	private static final Path PROC = Path.of("/proc");

	private static final double TICKS_PER_SECOND = ticksPerSecond();

	private CpuTimes() {
	}

	/** Whether {@code /proc} can be read here. */
	static boolean available() {
		return Files.isReadable(PROC.resolve("self").resolve("stat"));
	}

	/**
	 * CPU seconds of the children of this JVM that it has waited for ({@code cutime + cstime}): read
	 * before and after running a program to learn what that program used once it has exited.
	 */
	static double waitedForChildrenSeconds() {
		long[] fields = stat(PROC.resolve("self"));
		return (fields != null) ? (fields[CUTIME] + fields[CSTIME]) / TICKS_PER_SECOND : Double.NaN;
	}

	/** User and kernel CPU seconds of a running process so far, or {@code null} when unreadable. */
	static double[] process(long pid) {
		long[] fields = stat(PROC.resolve(String.valueOf(pid)));
		return (fields != null) ? new double[] { fields[UTIME] / TICKS_PER_SECOND, fields[STIME] / TICKS_PER_SECOND }
				: null;
	}

	/**
	 * The server's CPU time at one moment: every {@code postgres} process's own time plus what its
	 * waited-for children used. A backend that exits is reaped by the postmaster, whose children's
	 * time then holds it, so connections that come and go in between are counted too.
	 *
	 * @param connection used to tell other sessions (client backends of other applications) apart
	 */
	static ServerSnapshot server(Connection connection) {
		Map<Long, Long> ticks = new HashMap<>();
		try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, "[0-9]*")) {
			for (Path process : processes) {
				if ("postgres".equals(command(process))) {
					long[] fields = stat(process);
					if (fields != null) {
						ticks.put(Long.parseLong(process.getFileName().toString()),
								fields[UTIME] + fields[STIME] + fields[CUTIME] + fields[CSTIME]);
					}
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			return new ServerSnapshot(Map.of(), Set.of());
		}
		return new ServerSnapshot(ticks, otherSessions(connection));
	}

	/** Client backends whose application name is not one of the benchmark's. */
	private static Set<Long> otherSessions(Connection connection) {
		Set<Long> pids = new HashSet<>();
		try (Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT pid FROM pg_stat_activity WHERE backend_type = "
						+ "'client backend' AND coalesce(application_name, '') NOT LIKE '" + OUR_APPLICATIONS + "%'")) {
			while (rs.next()) {
				pids.add(rs.getLong(1));
			}
		}
		catch (SQLException ex) {
			// Without pg_stat_activity every session counts as the benchmark's.
		}
		return pids;
	}

	/**
	 * The server's CPU time at one moment.
	 *
	 * @param ticks clock ticks per {@code postgres} process id; empty when none could be read
	 * @param otherSessions ids of other applications' client backends
	 */
	record ServerSnapshot(Map<Long, Long> ticks, Set<Long> otherSessions) {

		/** Server CPU used from {@code before} until this snapshot. */
		ServerUsage since(ServerSnapshot before) {
			if (this.ticks.isEmpty() || before.ticks.isEmpty()) {
				return ServerUsage.UNKNOWN;
			}
			// A backend that exited in between left its whole life's time in the postmaster's children's
			// time: subtracting what it had used before leaves what it used in between.
			long total = sum(this.ticks) - sum(before.ticks);
			long others = 0;
			for (Map.Entry<Long, Long> process : this.ticks.entrySet()) {
				if (this.otherSessions.contains(process.getKey()) || before.otherSessions.contains(process.getKey())) {
					others += process.getValue() - before.ticks.getOrDefault(process.getKey(), 0L);
				}
			}
			return new ServerUsage(total / TICKS_PER_SECOND, others / TICKS_PER_SECOND);
		}

		private static long sum(Map<Long, Long> ticks) {
			return ticks.values().stream().mapToLong(Long::longValue).sum();
		}

	}

	/**
	 * Server CPU over a window.
	 *
	 * @param seconds every {@code postgres} process, background processes (WAL writer, checkpointer)
	 * included
	 * @param otherSessionsSeconds of that, what client backends of other applications used (another
	 * workload sharing the server); the part of those that exited in between cannot be told apart
	 */
	record ServerUsage(double seconds, double otherSessionsSeconds) {

		static final ServerUsage UNKNOWN = new ServerUsage(Double.NaN, Double.NaN);

		boolean known() {
			return !Double.isNaN(this.seconds);
		}

		/** The benchmark's share: everything but the other applications' sessions. */
		double ownSeconds() {
			return this.seconds - this.otherSessionsSeconds;
		}

	}

	/**
	 * CPU seconds of one PostgreSQL server so far: its postmaster's own time and what its waited-for
	 * children used, plus the time of each of its children still running (its backends and background
	 * processes). For several servers on one machine, where {@link #server} adds them all up.
	 */
	static double serverTree(long postmasterPid) {
		long ticks = 0;
		try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, "[0-9]*")) {
			for (Path process : processes) {
				long pid = Long.parseLong(process.getFileName().toString());
				long[] fields = stat(process);
				if (fields == null) {
					continue;
				}
				if (pid == postmasterPid) {
					ticks += fields[UTIME] + fields[STIME] + fields[CUTIME] + fields[CSTIME];
				}
				else if (fields[PPID] == postmasterPid) {
					ticks += fields[UTIME] + fields[STIME];
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			return Double.NaN;
		}
		return ticks / TICKS_PER_SECOND;
	}

	// Fields of /proc/<pid>/stat counted from the one after the command's closing parenthesis
	// (field 3, the state, is index 0).
	private static final int PPID = 1;

	private static final int UTIME = 11;

	private static final int STIME = 12;

	private static final int CUTIME = 13;

	private static final int CSTIME = 14;

	/** The command name in parentheses; it may itself hold spaces and parentheses. */
	private static String command(Path process) {
		try {
			String stat = Files.readString(process.resolve("stat"), StandardCharsets.US_ASCII);
			return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	/** The numeric fields after the command name, or {@code null} when the process is gone. */
	private static long[] stat(Path process) {
		try {
			String stat = Files.readString(process.resolve("stat"), StandardCharsets.US_ASCII);
			String[] parts = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
			long[] fields = new long[CSTIME + 1];
			for (int i = 1; i < fields.length; i++) {
				fields[i] = Long.parseLong(parts[i]);
			}
			return fields;
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	/** {@code getconf CLK_TCK}, else the 100 that Linux uses almost everywhere. */
	private static double ticksPerSecond() {
		try {
			Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
			String value = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
			if (getconf.waitFor(5, TimeUnit.SECONDS) && getconf.exitValue() == 0) {
				return Double.parseDouble(value);
			}
		}
		catch (IOException | RuntimeException ex) {
			// Not Linux, or no getconf: the usual value.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return 100;
	}

}
