package dev.pgqueue.benchmark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.userpath.UserPathApplication;

/**
 * One run of {@link UserPathApplication} in a JVM of its own, on this JVM's classpath and JDK with
 * default JVM options, as a user would start it. Spoken to over its stdin and stdout (see
 * {@code DrainProtocol}); its log goes to a temporary file that is kept, and named, when it fails.
 */
final class UserPathProcess implements AutoCloseable {

	static final String APPLICATION_NAME = CpuTimes.OUR_APPLICATIONS + "-user-path";

	private static final String PREFIX = "USERPATH ";

	/** JVM and Spring Boot start-up, then the warm-up drain, on a busy 2-core machine. */
	private static final Duration READY_TIMEOUT = Duration.ofMinutes(5);

	private static final String END = "\0end";

	/** JVM options for the application's JVM, separated by spaces: what a deployment would add. */
	static final String JVM_OPTIONS_PROPERTY = "pgqueue.bench.user-path.jvm-options";

	private final Process process;

	private final Writer commands;

	private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();

	private final Path log;

	private boolean failed;

	private UserPathProcess(Process process, Path log) {
		this.process = process;
		this.log = log;
		this.commands = process.outputWriter(StandardCharsets.UTF_8);
		Thread reader = new Thread(this::readReplies, "user-path-replies-" + process.pid());
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Starts the application on the schema's table, which should be empty.
	 *
	 * @param jfr file the recorded drain's JFR recording goes to, or {@code null}
	 */
	static UserPathProcess start(BenchDatabase database, BenchSchema schema, Setting setting, Path jfr)
			throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		if (jfr != null) {
			// JFR from the start, though only the measured drain is written (DrainProtocol): started
			// mid-run, it would re-instrument JDK classes and send their compiled code back to the JIT
			// inside the measured window.
			command.add("-XX:StartFlightRecording=settings=profile");
		}
		String options = System.getProperty(JVM_OPTIONS_PROPERTY, "");
		if (!options.isBlank()) {
			// Deployment-side options such as JDK 25's AOT cache (-XX:AOTCacheOutput=… for a training run,
			// -XX:AOTCache=… to start from it), CDS or JIT settings.
			command.addAll(List.of(options.trim().split("\\s+")));
		}
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(UserPathApplication.class.getName());
		properties(database, schema, setting, jfr)
			.forEach((key, value) -> command.add("--" + key + "=" + value));
		Path log = Files.createTempFile("pgqueue-user-path-", ".log");
		ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
		if (database.password() != null) {
			// Not on the command line, where ps would show it.
			builder.environment().put("SPRING_DATASOURCE_PASSWORD", database.password());
		}
		return new UserPathProcess(builder.start(), log);
	}

	/** What a user would write in application.properties for this setting. */
	static Map<String, String> properties(BenchDatabase database, BenchSchema schema, Setting setting, Path jfr) {
		Map<String, String> properties = new LinkedHashMap<>();
		String url = database.jdbcUrl();
		properties.put("spring.datasource.url",
				url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + APPLICATION_NAME);
		if (database.username() != null) {
			properties.put("spring.datasource.username", database.username());
		}
		// Each transactional batch holds a connection; the notification listener keeps one and the
		// background services borrow one: concurrency + 2, the least the engine asks for.
		properties.put("spring.datasource.hikari.maximum-pool-size", String.valueOf(setting.concurrency() + 2));
		properties.put("pgqueue.schema.name", schema.name().value());
		String queue = "pgqueue.queues." + UserPathApplication.QUEUE + ".";
		properties.put(queue + "mode", setting.mode().name().toLowerCase(Locale.ROOT));
		properties.put(queue + "concurrency", String.valueOf(setting.concurrency()));
		properties.put(queue + "batch-size", String.valueOf(setting.batchSize()));
		if (setting.mode() == QueueMode.TRANSACTIONAL) {
			// Claim-and-delete, like the DELETE baseline; leased keeps completed rows, like its baseline.
			properties.put("pgqueue.retention.completed", "0");
		}
		if (jfr != null) {
			properties.put("userpath.jfr", jfr.toString());
		}
		return properties;
	}

	long pid() {
		return this.process.pid();
	}

	/** Waits until the application has started and stopped its pollers; returns pgqueue's meter count. */
	int awaitReady() {
		String ready = await("READY", READY_TIMEOUT);
		return Integer.parseInt(field(ready, "meters"));
	}

	/**
	 * Lets the application drain the {@code jobs} jobs loaded in its table and returns what it
	 * measured; {@code record}: with JFR, if the application was given a file for it.
	 */
	Drain drain(long jobs, boolean record) throws IOException {
		send("GO " + jobs + (record ? " record" : ""));
		String done = await("DONE", Drains.TIMEOUT);
		Map<String, Double> threads = new LinkedHashMap<>();
		for (String group : field(done, "threads").split(";")) {
			int equals = group.lastIndexOf('=');
			threads.put(group.substring(0, equals), Long.parseLong(group.substring(equals + 1)) / 1e9);
		}
		long cpu = Long.parseLong(field(done, "cpu"));
		return new Drain(Long.parseLong(field(done, "handled")), Long.parseLong(field(done, "nanos")) / 1e9,
				(cpu >= 0) ? cpu / 1e9 : Double.NaN, threads, Long.parseLong(field(done, "jit")),
				Long.parseLong(field(done, "gcCount")), Long.parseLong(field(done, "gcMs")),
				Double.parseDouble(field(done, "completedMeter")));
	}

	/**
	 * What the application measured.
	 *
	 * @param handled jobs its listener ran
	 * @param seconds from starting its pollers until no job was unfinished in the table
	 * @param cpuSeconds CPU time of its JVM over that window
	 * @param threads of that, CPU seconds by thread group, biggest first ({@code jvm-internal}: GC,
	 * JIT and other threads of the JVM itself)
	 * @param jitMillis time the JIT compilers spent over that window (-1 when unknown): more than a
	 * little means the warm-up was too short
	 * @param gcCount garbage collections over it
	 * @param gcMillis time they took
	 * @param completedMeter growth of pgqueue's {@code pgqueue.jobs.completed} counter over it
	 */
	record Drain(long handled, double seconds, double cpuSeconds, Map<String, Double> threads, long jitMillis,
			long gcCount, long gcMillis, double completedMeter) {

	}

	/**
	 * One setting of the application.
	 *
	 * @param mode queue mode
	 * @param batchSize most jobs one claim takes
	 * @param concurrency transactional: batches at once; leased: jobs at once
	 */
	record Setting(QueueMode mode, int batchSize, int concurrency) {

		/** Batch size and concurrency, as the drain workload names them. */
		String knobs() {
			return "b=" + this.batchSize + " c=" + this.concurrency;
		}

		@Override
		public String toString() {
			return this.mode.name().toLowerCase(Locale.ROOT) + " " + knobs();
		}

	}

	private void send(String command) throws IOException {
		this.commands.write(command + "\n");
		this.commands.flush();
	}

	private String await(String reply, Duration timeout) {
		try {
			String line = this.replies.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
			if (line != null && line.startsWith(reply + " ")) {
				return line;
			}
			this.failed = true;
			String why = (line == null) ? "no " + reply + " within " + timeout
					: (line.equals(END) ? "it exited" : line);
			throw new IllegalStateException("The user-path application failed: " + why + "; its log: " + this.log
					+ "\n" + tail());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	private static String field(String line, String name) {
		for (String part : line.split(" ")) {
			if (part.startsWith(name + "=")) {
				return part.substring(name.length() + 1);
			}
		}
		throw new IllegalStateException("No " + name + " in '" + line + "'");
	}

	private void readReplies() {
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String line = out.readLine(); line != null; line = out.readLine()) {
				if (line.startsWith(PREFIX)) {
					this.replies.add(line.substring(PREFIX.length()));
				}
			}
		}
		catch (IOException ex) {
			// The process is gone; said below.
		}
		this.replies.add(END);
	}

	private String tail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			return "(log unreadable: " + ex.getMessage() + ")";
		}
	}

	/** Asks the application to exit, and makes sure it does; keeps its log only when it failed. */
	@Override
	public void close() throws IOException {
		if (this.process.isAlive()) {
			try {
				send("EXIT");
				this.commands.close();
			}
			catch (IOException ex) {
				// Exited meanwhile.
			}
			try {
				if (!this.process.waitFor(1, TimeUnit.MINUTES)) {
					this.process.destroyForcibly();
				}
			}
			catch (InterruptedException ex) {
				this.process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
		}
		if (!this.failed) {
			Files.deleteIfExists(this.log);
		}
	}

}
