package dev.pgqueue.benchmark.userpath;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.schema.SchemaName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * What the application does for the harness, one line at a time:
 *
 * <ol>
 * <li>Once started, it stops its pollers (the table is empty) and prints {@code READY}.</li>
 * <li>For every {@code GO n} (after the harness loaded {@code n} jobs) it starts its pollers, waits
 * until the table has no unfinished job left (every outcome committed, not only every listener
 * returned), stops them and prints {@code DONE} with the time that took and what the JVM spent
 * meanwhile ({@link JvmWindow}). The harness runs warm-up rounds this way before the measured one,
 * so that JVM and context start-up and the JIT's work stay out of the measured window.
 * {@code GO n record} also records the round with JFR when {@code userpath.jfr} names a file.</li>
 * <li>{@code EXIT}, or the end of stdin, closes the application.</li>
 * </ol>
 *
 * <p>The pollers are those the starter's {@link QueueEngine} made at start-up, one per queue with a
 * listener; they are stopped and started through their {@code SmartLifecycle} methods, as a context
 * stop and start would; a restart builds new worker threads but keeps the compiled code.
 */
final class DrainProtocol {

	/** Starts every line meant for the harness; anything else on stdout is ignored. */
	static final String PREFIX = "USERPATH ";

	private static final Duration TIMEOUT = Duration.ofMinutes(10);

	private final ConfigurableApplicationContext context;

	private final BufferedReader commands;

	private final PrintStream out;

	private final NoopListener listener;

	private final List<JobPoller> pollers;

	private final MeterRegistry registry;

	private final String unfinishedQuery;

	DrainProtocol(ConfigurableApplicationContext context, BufferedReader commands, PrintStream out) {
		this.context = context;
		this.commands = commands;
		this.out = out;
		this.listener = context.getBean(NoopListener.class);
		this.pollers = context.getBeanProvider(QueueEngine.class)
			.stream()
			.flatMap((engine) -> engine.database().pollers().stream())
			.toList();
		this.registry = context.getBean(MeterRegistry.class);
		String table = SchemaName.of(environment().getRequiredProperty("pgqueue.schema.name")).qualify("pgqueue_jobs");
		this.unfinishedQuery = "SELECT EXISTS (SELECT 1 FROM " + table + " WHERE state IN ('available', 'running'))";
	}

	void run() throws Exception {
		if (this.pollers.isEmpty()) {
			throw new IllegalStateException("No pgqueue poller in the context: is the starter on the classpath?");
		}
		// A connection of its own, outside the application's pool, so that watching never takes a
		// connection from a batch.
		try (Connection probe = connect()) {
			this.pollers.forEach(JobPoller::stop);
			long meters = this.registry.getMeters().stream().filter((m) -> m.getId().getName().startsWith("pgqueue.")).count();
			if (meters == 0) {
				throw new IllegalStateException("No pgqueue.* meter is registered: metrics are not on");
			}
			say("READY meters=" + meters);
			for (String command = this.commands.readLine(); command != null && command.startsWith("GO ");
					command = this.commands.readLine()) {
				String[] words = command.split(" ");
				drain(probe, Long.parseLong(words[1]), words.length > 2 && words[2].equals("record"));
			}
		}
	}

	private void drain(Connection probe, long jobs, boolean record) throws Exception {
		long before = this.listener.handled();
		double completedBefore = completedCount();
		Recording recording = record ? startRecording() : null;
		JvmWindow window = new JvmWindow();
		long start = System.nanoTime();
		this.pollers.forEach(JobPoller::start);
		awaitFinished(probe, before + jobs);
		long nanos = System.nanoTime() - start;
		String spent = window.close();
		if (recording != null) {
			recording.stop();
			recording.close();
		}
		this.pollers.forEach(JobPoller::stop);
		say("DONE handled=%d nanos=%d completedMeter=%.0f %s".formatted(this.listener.handled() - before, nanos,
				completedCount() - completedBefore, spent));
	}

	/**
	 * Waits until the listener has counted {@code handled} jobs in all, then until the table has no
	 * unfinished job: the last batches commit (transactional) or are completed (leased) after their
	 * listeners return.
	 */
	private void awaitFinished(Connection probe, long handled) throws SQLException {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (this.listener.handled() < handled) {
			pause(deadline, () -> this.listener.handled() + " of " + handled + " jobs handled");
		}
		while (unfinished(probe)) {
			pause(deadline, () -> "jobs still unfinished in the table");
		}
	}

	private boolean unfinished(Connection probe) throws SQLException {
		try (Statement statement = probe.createStatement(); ResultSet rs = statement.executeQuery(this.unfinishedQuery)) {
			rs.next();
			return rs.getBoolean(1);
		}
	}

	private static void pause(long deadline, java.util.function.Supplier<String> state) {
		if (System.nanoTime() > deadline) {
			throw new IllegalStateException("Timed out after " + TIMEOUT + ": " + state.get());
		}
		try {
			Thread.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/** Jobs pgqueue counted as completed in its Micrometer counter: shows the meters are recorded. */
	private double completedCount() {
		return this.registry.find("pgqueue.jobs.completed").counters().stream().mapToDouble(Counter::count).sum();
	}

	/**
	 * A JFR recording of the measured drain alone, when {@code userpath.jfr} names a file: started
	 * before the window opens and stopped after it closes, so that neither start-up nor warm-up
	 * dilutes the profile.
	 */
	private Recording startRecording() throws IOException, ParseException {
		String file = environment().getProperty("userpath.jfr");
		if (file == null || file.isBlank()) {
			return null;
		}
		Recording recording = new Recording(Configuration.getConfiguration("profile"));
		// A drain lasts seconds: sampled every 10 ms (the profile's period) it leaves too few samples.
		recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
		// Every compilation, to see what the JIT still works on after the warm-up.
		recording.enable("jdk.Compilation").withThreshold(Duration.ZERO);
		recording.setName("pgqueue-user-path");
		recording.setToDisk(true);
		recording.setDestination(Path.of(file));
		recording.start();
		return recording;
	}

	private Connection connect() throws SQLException {
		Environment environment = environment();
		Properties properties = new Properties();
		String username = environment.getProperty("spring.datasource.username");
		String password = environment.getProperty("spring.datasource.password");
		if (username != null) {
			properties.setProperty("user", username);
		}
		if (password != null) {
			properties.setProperty("password", password);
		}
		return DriverManager.getConnection(environment.getRequiredProperty("spring.datasource.url"), properties);
	}

	private Environment environment() {
		return this.context.getEnvironment();
	}

	private void say(String line) {
		this.out.println(PREFIX + line);
		this.out.flush();
	}

}
