package dev.pgqueue.autoconfigure.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The internals page says which class owns each behaviour; a class renamed, moved or removed without
 * that page following makes it lie. Every class it names by package (`engine.poll.JobPoller`,
 * `listener.JobListenerMethodAdapter`, `metrics.QueueMetrics`, …) must exist.
 */
class InternalsNameRealClassesTests {

	private static final Pattern NAMED = Pattern
		.compile("`((?:engine|listener|metrics|observation|schema)(?:\\.[a-z]+)*)\\.([A-Z][A-Za-z]+)(?:[.#(][^`]*)?`");

	@Test
	void everyClassTheInternalsPageNamesByPackageExists() throws IOException {
		Path page = Repository.root().resolve("docs/internals.md");
		List<String> named = named(Files.readString(page));
		assertThat(named).as("classes named by package in docs/internals.md").hasSizeGreaterThan(40);
		Set<String> missing = new TreeSet<>();
		for (String name : named) {
			try {
				Class.forName("dev.pgqueue." + name, false, getClass().getClassLoader());
			}
			catch (ClassNotFoundException ex) {
				missing.add(name);
			}
		}
		assertThat(missing).as("classes docs/internals.md names that do not exist (rename them there)").isEmpty();
	}

	private static List<String> named(String markdown) {
		List<String> names = new ArrayList<>();
		Matcher matcher = NAMED.matcher(markdown);
		while (matcher.find()) {
			names.add(matcher.group(1) + "." + matcher.group(2));
		}
		return names;
	}

}
