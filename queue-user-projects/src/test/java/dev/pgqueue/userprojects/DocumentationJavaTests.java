package dev.pgqueue.userprojects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every {@code ```java} block of README.md and docs/*.md compiles, in one project of a user's own
 * against the artifacts this build installed, with the imports a user writes: a complete compilation
 * unit as it is printed, a fragment inside the context its marker names (see {@link JavaBlock}). What
 * javac reports is mapped back to the Markdown file and line.
 */
class DocumentationJavaTests {

	@Test
	void everyJavaBlockOfTheDocumentationCompilesAgainstTheBuiltArtifacts() throws Exception {
		Path root = UserProject.ROOT;
		List<String> problems = new ArrayList<>();
		List<JavaBlock> blocks = new ArrayList<>();
		for (String file : markdownFiles(root)) {
			blocks.addAll(JavaBlock.of(root, file, problems));
		}
		assertThat(blocks).as("the ```java blocks of README.md and docs/*.md, indented ones (in a list) too")
			.hasSize(fenceLines(root, "```java"))
			.isNotEmpty();
		List<JavaBlock> readme = blocks.stream().filter((block) -> block.file().equals("README.md")).toList();

		DocumentationProject documentation = new DocumentationProject(root,
				QuickStart.files(root.resolve("README.md")), readme);
		for (JavaBlock block : blocks) {
			documentation.add(block);
		}
		problems.addAll(documentation.problems());
		if (!problems.isEmpty()) {
			fail("%d ```java block(s) of the documentation cannot be compiled as marked:%n%s", problems.size(),
					String.join("\n", problems));
		}

		UserProject project = UserProject.create("documentation");
		documentation.writeTo(project);
		UserProject.MavenRun build = project.run(Map.of(), "test-compile");
		if (build.exitValue() != 0) {
			List<String> errors = documentation.errors(project, build.output());
			if (errors.isEmpty()) {
				fail("Maven test-compile failed on %s (exit %d) without an error of javac's; the end of its log (%s):%n%s",
						project.dir(), build.exitValue(), build.log(), UserProject.tail(build.output(), 120));
			}
			fail("%d compile error(s) in the documentation's ```java blocks (the project: %s):%n%s", errors.size(),
					project.dir(), String.join("\n", errors));
		}
		for (String path : documentation.files().keySet()) {
			String compiled = path.replaceFirst("^src/main/java/", "target/classes/")
				.replaceFirst("^src/test/java/", "target/test-classes/")
				.replaceFirst("[^/]+\\.java$", "");
			assertThat(project.dir().resolve(compiled)).as("the classes of %s, from the block of %s", path,
					documentation.files().get(path).block().where()).isDirectoryContaining("glob:**.class");
		}
	}

	/** How many lines of the documentation open a fence with this text, wherever they are indented. */
	private static int fenceLines(Path root, String fence) throws IOException {
		int count = 0;
		for (String file : markdownFiles(root)) {
			count += (int) Files.readAllLines(root.resolve(file)).stream().filter((line) -> line.trim().startsWith(fence)).count();
		}
		return count;
	}

	/** README.md and every docs/*.md, relative to the root. */
	private static List<String> markdownFiles(Path root) throws IOException {
		List<String> files = new ArrayList<>(List.of("README.md"));
		try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
			docs.map((path) -> "docs/" + path.getFileName())
				.filter((name) -> name.endsWith(".md"))
				.sorted()
				.forEach(files::add);
		}
		return files;
	}

}
