package dev.pgqueue.autoconfigure.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The repository's documents, found from wherever the tests run: the nearest directory, going up from
 * the working directory, that holds both {@code README.md} and {@code docs/}.
 */
final class Repository {

	private Repository() {
	}

	static Path root() {
		Path start = Path.of("").toAbsolutePath();
		for (Path dir = start; dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))) {
				return dir;
			}
		}
		throw new IllegalStateException("No directory holding README.md and docs/ at or above " + start);
	}

	/** README.md, then every Markdown file directly in docs/, by name. */
	static List<Path> documents() {
		Path root = root();
		List<Path> documents = new ArrayList<>();
		documents.add(root.resolve("README.md"));
		try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
			docs.filter((path) -> path.getFileName().toString().endsWith(".md")).sorted().forEach(documents::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return documents;
	}

	/** A path as the failure messages show it: relative to the repository's root. */
	static String name(Path path) {
		return root().relativize(path.toAbsolutePath().normalize()).toString();
	}

}
