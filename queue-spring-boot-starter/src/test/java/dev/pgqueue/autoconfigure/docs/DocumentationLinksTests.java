package dev.pgqueue.autoconfigure.docs;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import dev.pgqueue.autoconfigure.docs.Markdown.Heading;
import dev.pgqueue.autoconfigure.docs.Markdown.Line;
import dev.pgqueue.autoconfigure.docs.Markdown.Link;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link in the README and in {@code docs/*.md} leads somewhere: its file exists and its
 * {@code #anchor} is a heading of that file, by GitHub's rules. And the README stays a short map of
 * the documentation, with a table of contents, that keeps the test command CI runs.
 */
class DocumentationLinksTests {

	private static final int README_MOST_LINES = 470;

	private static final String TEST_COMMAND = "./mvnw -B verify";

	private static final Pattern EXTERNAL = Pattern.compile("^(?i)(https?:|mailto:)");

	private static final Pattern CONTENTS_HEADING = Pattern.compile("(?i)^(table of )?contents$");

	private final Map<Path, Set<String>> anchors = new HashMap<>();

	@Test
	void everyRelativeLinkLeadsToAnExistingFileAndHeading() {
		List<Path> documents = Repository.documents();
		assertThat(documents).as("README.md and docs/*.md").hasSizeGreaterThan(1);

		List<String> broken = new ArrayList<>();
		int checked = 0;
		for (Path document : documents) {
			Markdown markdown = Markdown.read(document);
			for (Link link : markdown.links()) {
				if (EXTERNAL.matcher(link.target()).find()) {
					continue;
				}
				checked++;
				String problem = problem(document, link.target());
				if (problem != null) {
					broken.add(Repository.name(document) + ":" + link.line() + ": (" + link.target() + ") " + problem);
				}
			}
		}

		assertThat(checked).as("relative links found").isGreaterThan(50);
		assertThat(broken).as("%d broken links:%n%s%n", broken.size(), String.join(System.lineSeparator(), broken))
			.isEmpty();
	}

	@Test
	void readmeIsShortWithATableOfContents() {
		Path readme = Repository.root().resolve("README.md");
		Markdown markdown = Markdown.read(readme);

		assertThat(markdown.lineCount()).as("lines of README.md").isLessThanOrEqualTo(README_MOST_LINES);

		List<Heading> headings = markdown.headings();
		Heading contents = headings.stream()
			.filter((heading) -> CONTENTS_HEADING.matcher(heading.text().strip()).matches())
			.findFirst()
			.orElse(null);
		assertThat(contents).as("a heading 'Contents' or 'Table of contents' in README.md").isNotNull();
		assertThat(headings.indexOf(contents)).as("the table of contents comes among the first headings")
			.isLessThanOrEqualTo(1);

		int next = headings.stream()
			.filter((heading) -> heading.line() > contents.line() && heading.level() <= contents.level())
			.mapToInt(Heading::line)
			.findFirst()
			.orElse(Integer.MAX_VALUE);
		List<String> entries = markdown.prose()
			.stream()
			.filter((line) -> line.number() > contents.line() && line.number() < next)
			.map(Line::text)
			.filter((text) -> text.strip().startsWith("- [") || text.strip().startsWith("* ["))
			.toList();
		List<String> sections = headings.stream()
			.filter((heading) -> heading.level() == 2 && heading != contents)
			.map((heading) -> "(#" + Markdown.anchor(heading.text()) + ")")
			.toList();
		List<String> unlisted = sections.stream()
			.filter((section) -> entries.stream().noneMatch((entry) -> entry.contains(section)))
			.toList();
		assertThat(sections).as("sections of README.md").hasSizeGreaterThanOrEqualTo(5);
		assertThat(unlisted).as("sections of README.md missing from its table of contents").isEmpty();
	}

	@Test
	void readmeKeepsTheTestCommandThatCiRuns() throws Exception {
		List<String> lines = Files.readAllLines(Repository.root().resolve("README.md"));

		assertThat(lines.contains(TEST_COMMAND))
			.as("README.md gives the test command CI runs, word for word, on a line of its own: %s", TEST_COMMAND)
			.isTrue();
		List<String> ci = Files.readAllLines(Repository.root().resolve(".ci/run")).stream().map(String::strip).toList();
		assertThat(ci.contains(TEST_COMMAND))
			.as(".ci/run runs the README's test command, word for word, on a line of its own: %s", TEST_COMMAND)
			.isTrue();
	}

	/** What is wrong with a link from a document, or null when it leads somewhere. */
	private String problem(Path document, String target) {
		int hash = target.indexOf('#');
		String path = (hash >= 0) ? target.substring(0, hash) : target;
		String anchor = (hash >= 0) ? target.substring(hash + 1) : null;
		Path file = document;
		if (!path.isEmpty()) {
			file = document.getParent().resolve(URLDecoder.decode(path, StandardCharsets.UTF_8)).normalize();
			if (!Files.exists(file)) {
				return "no such file: " + Repository.name(file);
			}
		}
		if (anchor == null) {
			return null;
		}
		if (anchor.isEmpty()) {
			return "an empty anchor";
		}
		if (!file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".md")) {
			return "an anchor into a file that is not Markdown: " + Repository.name(file);
		}
		Set<String> headings = this.anchors.computeIfAbsent(file, (md) -> Markdown.read(md).anchors());
		if (!headings.contains(URLDecoder.decode(anchor, StandardCharsets.UTF_8))) {
			return "no heading with anchor #" + anchor + " in " + Repository.name(file);
		}
		return null;
	}

}
