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
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.QueueAssignment;

/**
 * One {@link QueueWorkerMain} in a JVM of its own, on this JVM's classpath and JDK: a worker
 * instance that can be stopped softly or killed with {@code SIGKILL}.
 */
final class QueueWorkerProcess implements AutoCloseable {

	static final String APPLICATION_NAME = CpuTimes.OUR_APPLICATIONS + "-worker";

	private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

	private final Process process;

	private final Writer commands;

	private final Path log;

	private volatile String owner;

	private volatile int buckets;

	private QueueWorkerProcess(Process process, Path log) {
		this.process = process;
		this.log = log;
		this.commands = process.outputWriter(StandardCharsets.UTF_8);
		Thread reader = new Thread(this::read, "worker-output-" + process.pid());
		reader.setDaemon(true);
		reader.start();
	}

	/** Starts a worker polling the schema's queue; returns once its poller runs. */
	static QueueWorkerProcess start(BenchDatabase database, BenchSchema schema, QueueAssignment assignment,
			Duration heartbeat, int concurrency, int batchSize, Duration pollInterval) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(QueueWorkerMain.class.getName());
		command.add(database.jdbcUrl());
		command.add((database.username() != null) ? database.username() : "-");
		command.add(schema.name().value());
		command.add(assignment.name().toLowerCase(Locale.ROOT));
		command.add(String.valueOf(heartbeat.toMillis()));
		command.add(String.valueOf(concurrency));
		command.add(String.valueOf(batchSize));
		command.add(String.valueOf(pollInterval.toMillis()));
		Path log = Files.createTempFile("pgqueue-worker-", ".log");
		ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
		if (database.password() != null) {
			builder.environment().put("PGQUEUE_BENCH_PASSWORD", database.password());
		}
		QueueWorkerProcess worker = new QueueWorkerProcess(builder.start(), log);
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (worker.owner == null) {
			if (!worker.process.isAlive() || System.nanoTime() > deadline) {
				throw new IllegalStateException("Worker did not start; its log: " + log);
			}
			Drains.sleep(5);
		}
		return worker;
	}

	private void read() {
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String line = lines.readLine(); line != null; line = lines.readLine()) {
				if (line.startsWith("OWNER ")) {
					this.owner = line.substring(6);
				}
				else if (line.startsWith("BUCKETS ")) {
					this.buckets = Integer.parseInt(line.substring(8));
				}
			}
		}
		catch (IOException ex) {
			// The process is gone.
		}
	}

	/** The coordinator's name for this member. */
	String owner() {
		return this.owner;
	}

	/** Buckets its poller claims from now. */
	int buckets() {
		return this.buckets;
	}

	long pid() {
		return this.process.pid();
	}

	/** {@code kill -9}: no soft stop, no leaving the coordinator, connections cut by the kernel. */
	void kill() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Stops softly (the member leaves), or kills after 30 s. */
	@Override
	public void close() {
		if (!this.process.isAlive()) {
			return;
		}
		try {
			this.commands.write("stop\n");
			this.commands.flush();
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				kill();
			}
		}
		catch (IOException ex) {
			kill();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			kill();
		}
		try {
			Files.deleteIfExists(this.log);
		}
		catch (IOException ex) {
			// A temporary file.
		}
	}

}
