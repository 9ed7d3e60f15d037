package dev.pgqueue.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A {@link WorkerProcess} started by a test, with its output in a file. */
final class Worker {

	/** The exit status of a JVM ended by a signal: 128 plus the signal's number. */
	static final int KILLED = 128 + 9;

	static final int TERMINATED = 128 + 15;

	private final String name;

	private final Process process;

	private final Path log;

	Worker(String name, Process process, Path log) {
		this.name = name;
		this.process = process;
		this.log = log;
	}

	String name() {
		return this.name;
	}

	long pid() {
		return this.process.pid();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	Path log() {
		return this.log;
	}

	/** Everything the worker printed so far. */
	String output() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Lines of the output that contain {@code text}. */
	List<String> lines(String text) {
		return output().lines().filter((line) -> line.contains(text)).toList();
	}

	/** Waits until the worker's poller runs. */
	Worker awaitReady() {
		await().atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(100))
			.alias(this.name + " printed '" + WorkerProcess.READY + "' (see " + this.log + ")")
			.failFast(() -> !this.process.isAlive())
			.until(() -> output().contains(WorkerProcess.READY));
		return this;
	}

	/** Waits for the process to end by itself and returns its exit status. */
	int awaitExit(Duration atMost) throws InterruptedException {
		assertThat(this.process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS)).as("%s ended within %s (see %s)",
				this.name, atMost, this.log).isTrue();
		return this.process.exitValue();
	}

	/** Sends SIGKILL and checks the process died of it. */
	void kill() throws InterruptedException {
		// On Linux, destroyForcibly() is kill(pid, SIGKILL): no shutdown hook, no finally, no commit.
		this.process.destroyForcibly();
		assertThat(this.process.waitFor(30, TimeUnit.SECONDS)).as("%s died", this.name).isTrue();
		assertThat(this.process.exitValue()).as("exit status of %s: killed by signal 9", this.name).isEqualTo(KILLED);
	}

	/** Sends SIGTERM, waits for the graceful stop and returns the exit status. */
	int terminate(Duration atMost) throws InterruptedException {
		this.process.destroy();
		assertThat(this.process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS)).as("%s stopped", this.name).isTrue();
		return this.process.exitValue();
	}

	/** Stops the whole process (SIGSTOP): handlers, lease extensions, everything, as a long pause would. */
	void freeze() throws IOException, InterruptedException {
		signal("STOP");
	}

	/** Lets a frozen process go on (SIGCONT). */
	void thaw() throws IOException, InterruptedException {
		signal("CONT");
	}

	private void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
		assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -%s %d", signal, pid()).isTrue();
	}

	/** Sends SIGTERM if the process still runs, without waiting (clean-up). */
	void stopQuietly() {
		if (this.process.isAlive()) {
			this.process.destroy();
		}
	}

	/** Waits up to 30 s for the process to end, then kills it (clean-up). */
	void destroy() {
		try {
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			this.process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return this.name + " (pid " + pid() + ")";
	}

}
