package dev.pgqueue.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.test.TestDatabase;

/**
 * The worker processes of one scenario: real JVMs started with this JVM's class path, their output
 * in {@code target/reliability/<scenario>/<worker>.log}. Closing the fleet kills what still runs.
 */
final class WorkerFleet implements AutoCloseable {

	private final Workload workload;

	private final Path logs;

	private final Map<String, String> options;

	private final List<Worker> workers = new ArrayList<>();

	/**
	 * @param options {@link WorkerProcess} options every worker of the fleet gets
	 */
	WorkerFleet(String scenario, Workload workload, Map<String, String> options) {
		this.workload = workload;
		this.logs = Paths.get("target", "reliability", scenario);
		this.options = new LinkedHashMap<>(options);
		try {
			Files.createDirectories(this.logs);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Starts a worker with the fleet's options; does not wait for it. */
	Worker start(String name) {
		return start(name, Map.of());
	}

	/** Starts a worker with the fleet's options and some of its own; does not wait for it. */
	Worker start(String name, Map<String, String> overrides) {
		return start(name, WorkerProcess.class, overrides);
	}

	/**
	 * Starts a process of another main class of this module (which takes the same {@code url=},
	 * {@code schema=} and {@code name=} options and environment) with the fleet's options and some of
	 * its own; does not wait for it.
	 */
	Worker start(String name, Class<?> main, Map<String, String> overrides) {
		Map<String, String> settings = new LinkedHashMap<>(this.options);
		settings.putAll(overrides);
		settings.put("url", TestDatabase.get().jdbcUrl());
		settings.put("schema", this.workload.schemaName());
		settings.put("name", name);
		List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
				main.getName()));
		settings.forEach((key, value) -> command.add(key + "=" + value));
		Path log = this.logs.resolve(name + ".log");
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(log.toFile());
		TestDatabase database = TestDatabase.get();
		if (database.username() != null) {
			builder.environment().put(TestDatabase.USERNAME_VARIABLE, database.username());
		}
		if (database.password() != null) {
			builder.environment().put(TestDatabase.PASSWORD_VARIABLE, database.password());
		}
		try {
			Worker worker = new Worker(name, builder.start(), log);
			this.workers.add(worker);
			return worker;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start worker " + name + ": " + command, ex);
		}
	}

	/** Starts {@code count} workers named {@code prefix1…} and waits until each polls. */
	List<Worker> startReady(String prefix, int count) {
		List<Worker> started = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			started.add(start(prefix + i));
		}
		started.forEach(Worker::awaitReady);
		return started;
	}

	List<Worker> all() {
		return List.copyOf(this.workers);
	}

	/** What the logs of every worker of the fleet say about jobs that may run again. */
	WorkerLog log() {
		return WorkerLog.read(this.workers);
	}

	/** Output lines of every worker that contain {@code text}. */
	List<String> lines(String text) {
		return this.workers.stream().flatMap((worker) -> worker.lines(text).stream()).toList();
	}

	/**
	 * Stops every worker still running: SIGTERM to all, so that they print their summaries, then
	 * SIGKILL to any that has not ended within 30 s.
	 */
	@Override
	public void close() {
		this.workers.forEach(Worker::stopQuietly);
		this.workers.forEach(Worker::destroy);
	}

}
