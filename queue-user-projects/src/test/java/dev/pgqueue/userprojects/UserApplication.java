package dev.pgqueue.userprojects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/** A user's application started from its jar, as its own process, as {@code java -jar} starts it. */
final class UserApplication implements AutoCloseable {

	private final Process process;

	private final Path log;

	private UserApplication(Process process, Path log) {
		this.process = process;
		this.log = log;
	}

	static UserApplication start(Path jar, Map<String, String> environment, String... arguments) throws IOException {
		Path java = Path.of(System.getProperty("java.home"), "bin", "java");
		List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", jar.toString()));
		command.addAll(List.of(arguments));
		Path log = jar.resolveSibling(jar.getFileName() + "-" + System.nanoTime() + ".log");
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
		builder.environment().putAll(environment);
		return new UserApplication(builder.start(), log);
	}

	String output() {
		try {
			return Files.readString(this.log);
		}
		catch (IOException ex) {
			return "(log unreadable: " + ex + ")";
		}
	}

	UserApplication awaitLog(String regex, Duration timeout) {
		Pattern pattern = Pattern.compile(regex);
		try {
			await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(() -> {
				if (!this.process.isAlive() && !pattern.matcher(output()).find()) {
					fail("The application exited with %d before logging /%s/; its log:%n%s", this.process.exitValue(),
							regex, UserProject.tail(output(), 80));
				}
				return pattern.matcher(output()).find();
			});
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			fail("The application did not log /%s/ within %s; its log:%n%s", regex, timeout,
					UserProject.tail(output(), 80));
		}
		return this;
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	long pid() {
		return this.process.pid();
	}

	/** Sends a signal by name (TERM, INT) as an operator or an orchestrator does. */
	void signal(String name) throws Exception {
		Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(this.process.pid())).inheritIO().start();
		kill.waitFor(10, TimeUnit.SECONDS);
	}

	/** Waits for the process to end, and gives its exit status. */
	int awaitExit(Duration timeout) throws InterruptedException {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			fail("The application did not exit within %s; its log:%n%s", timeout, UserProject.tail(output(), 80));
		}
		return this.process.exitValue();
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			this.process.destroyForcibly();
			this.process.waitFor(30, TimeUnit.SECONDS);
		}
	}

}
