package dev.pgqueue.userprojects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The files of the README's quick start, read from its text: every code block of the section whose
 * introducing line names a file ({@code In `src/main/resources/application.yml`:}) is that file, as
 * printed. The dependency block is the inside of {@code pom.xml}; the rest of that pom is what
 * start.spring.io makes for a Spring Boot application, as step 1 says.
 */
final class QuickStart {

	/** A line that ends by naming a file of the project: {@code … `path`:} (a comma or words may follow the path). */
	private static final Pattern NAMES_A_FILE = Pattern.compile("`((?:src/|pom\\.xml)[^`]*)`[^`]*:\\s*$");

	private QuickStart() {
	}

	/** Each file the quick start prints, by its path in the project, in the order printed. */
	static Map<String, String> files(Path readme) throws IOException {
		List<String> lines = Files.readAllLines(readme);
		int start = lines.indexOf("## Quick start");
		if (start < 0) {
			throw new IllegalStateException(readme + " has no '## Quick start' section");
		}
		int end = start + 1;
		while (end < lines.size() && !lines.get(end).startsWith("## ")) {
			end++;
		}
		Map<String, String> files = new LinkedHashMap<>();
		String named = null;
		for (int i = start + 1; i < end; i++) {
			String line = lines.get(i);
			if (line.startsWith("```") && line.length() > 3) {
				int close = i + 1;
				while (close < end && !lines.get(close).equals("```")) {
					close++;
				}
				String content = String.join("\n", lines.subList(i + 1, close)) + "\n";
				if (named != null) {
					if (files.putIfAbsent(named, content) != null) {
						throw new IllegalStateException("The quick start of " + readme + " prints " + named + " twice (line "
								+ (i + 1) + ")");
					}
				}
				named = null;
				i = close;
				continue;
			}
			if (!line.isBlank()) {
				Matcher matcher = NAMES_A_FILE.matcher(line);
				named = matcher.find() ? matcher.group(1) : null;
			}
		}
		return files;
	}

	/** The project's pom: Spring Boot's parent, the quick start's dependencies, Spring Boot's plugin. */
	static String pom(String dependencies) {
		return UserProject.bootPom("signup", dependencies);
	}

}
