package dev.pgqueue.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;

/**
 * Prints a scenario's figures on one line, to the console and to
 * {@code target/reliability/figures.txt}, so that a run's results can be read back and quoted in
 * docs/reliability.md.
 */
final class Figures {

	private static final Path FILE = Paths.get("target", "reliability", "figures.txt");

	private Figures() {
	}

	/** The standard figures of a scenario, then {@code details}. */
	static String print(String scenario, Workload.Tally tally, Duration duration, String details) {
		StringBuilder figures = new StringBuilder(String.format(Locale.ROOT,
				"jobs=%d lost=%d duplicates=%d rescued=%d duration=%.1fs", tally.jobs(), tally.lost(),
				tally.duplicates(), tally.rescued(), duration.toMillis() / 1000.0));
		if (tally.retried() > 0 || tally.released() > 0 || tally.extraAttempts() > 0) {
			figures.append(String.format(Locale.ROOT, " handler-failures=%d released=%d extra-attempts=%d rescues-logged=%d",
					tally.retried(), tally.released(), tally.extraAttempts(), tally.rescuesLogged()));
		}
		if (!details.isEmpty()) {
			figures.append(" | ").append(details);
		}
		return print(scenario, figures.toString());
	}

	static String print(String scenario, String figures) {
		String line = "[reliability] " + scenario + ": " + figures;
		System.out.println(line);
		try {
			Files.createDirectories(FILE.getParent());
			Files.writeString(FILE, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
					StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return line;
	}

	static String seconds(Duration duration) {
		return String.format(Locale.ROOT, "%.1fs", duration.toMillis() / 1000.0);
	}

}
