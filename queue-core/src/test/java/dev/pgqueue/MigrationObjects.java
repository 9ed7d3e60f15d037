package dev.pgqueue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.pgqueue.schema.QueueMigrator;

/**
 * The objects pgqueue's migrations leave in the schema that a runtime role may need a grant on: tables
 * (and views), sequences and functions, each with the migration that created it, read from the
 * migrations' text in version order (a later {@code DROP} or rename counts). Indexes, triggers and
 * partitions (read through their parent) need no grant of their own; any other kind of object a migration creates is an error, so that a new
 * kind gets a decision rather than slipping through.
 */
final class MigrationObjects {

	/** Kinds of object that need no grant of the runtime role. */
	private static final Set<String> WITHOUT_GRANTS = Set.of("INDEX", "TRIGGER");

	private static final Pattern VERSION = Pattern.compile("V(\\d+)__.*\\.sql");

	private static final Pattern CREATE = Pattern.compile(
			"\\bCREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:UNIQUE\\s+|UNLOGGED\\s+|TEMP(?:ORARY)?\\s+|MATERIALIZED\\s+)*(\\w+)"
					+ "(?:\\s+CONCURRENTLY)?(?:\\s+IF\\s+NOT\\s+EXISTS)?\\s+(?:\\w+\\.)?(\\w+)",
			Pattern.CASE_INSENSITIVE);

	private static final Pattern DROP = Pattern.compile(
			"\\bDROP\\s+(?:MATERIALIZED\\s+)?(TABLE|VIEW|SEQUENCE|FUNCTION|PROCEDURE)\\s+(?:IF\\s+EXISTS\\s+)?(?:\\w+\\.)?(\\w+)",
			Pattern.CASE_INSENSITIVE);

	private static final Pattern RENAME = Pattern.compile(
			"\\bALTER\\s+(TABLE|VIEW|SEQUENCE|FUNCTION)\\s+(?:IF\\s+EXISTS\\s+)?(?:\\w+\\.)?(\\w+)(?:\\s*\\([^)]*\\))?\\s+RENAME\\s+TO\\s+(\\w+)",
			Pattern.CASE_INSENSITIVE);

	/**
	 * A partition: reached through its parent, whose rights PostgreSQL checks, so it needs no grant of
	 * its own.
	 */
	private static final Pattern PARTITION_OF = Pattern.compile("\\bPARTITION\\s+OF\\b", Pattern.CASE_INSENSITIVE);

	private static final Pattern RETURNS_TRIGGER = Pattern.compile("\\bRETURNS\\s+trigger\\b", Pattern.CASE_INSENSITIVE);

	private MigrationObjects() {
	}

	/**
	 * An object a migration created.
	 * @param kind {@code TABLE}, {@code VIEW} (read only, granted as a table is), {@code SEQUENCE},
	 * {@code FUNCTION} or
	 * {@code TRIGGER FUNCTION} (which PostgreSQL runs without checking {@code EXECUTE})
	 * @param name its unqualified name
	 * @param migration the file that created it
	 */
	record SchemaObject(String kind, String name, String migration) {
	}

	/** The objects left by the migrations pgqueue ships, read from the class path. */
	static List<SchemaObject> shipped() {
		URL location = MigrationObjects.class.getClassLoader()
			.getResource(QueueMigrator.LOCATION.substring("classpath:".length()));
		if (location == null) {
			throw new IllegalStateException("No migrations on the class path at " + QueueMigrator.LOCATION);
		}
		try (Stream<Path> files = Files.list(Path.of(location.toURI()))) {
			Map<String, String> migrations = new LinkedHashMap<>();
			files.filter((file) -> VERSION.matcher(file.getFileName().toString()).matches())
				.sorted(Comparator.comparingInt(MigrationObjects::version))
				.forEach((file) -> migrations.put(file.getFileName().toString(), read(file)));
			if (migrations.isEmpty()) {
				throw new IllegalStateException("No V*.sql migrations in " + location);
			}
			return of(migrations);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** The objects these migrations (file name to text, in the order they apply) leave. */
	static List<SchemaObject> of(Map<String, String> migrations) {
		Map<String, SchemaObject> objects = new LinkedHashMap<>();
		migrations.forEach((file, text) -> {
			for (String statement : statements(text)) {
				Matcher rename = RENAME.matcher(statement);
				if (rename.find()) {
					String kind = kind(rename.group(1));
					SchemaObject renamed = objects.remove(key(kind, rename.group(2)));
					if (renamed != null) {
						objects.put(key(kind, rename.group(3)), new SchemaObject(renamed.kind(), rename.group(3), file));
					}
					continue;
				}
				Matcher drop = DROP.matcher(statement);
				if (drop.find() && drop.start() == 0) {
					objects.remove(key(kind(drop.group(1)), drop.group(2)));
					continue;
				}
				Matcher create = CREATE.matcher(statement);
				if (!create.find() || create.start() != 0) {
					continue;
				}
				String kind = create.group(1).toUpperCase(Locale.ROOT);
				String name = create.group(2).toLowerCase(Locale.ROOT);
				if (WITHOUT_GRANTS.contains(kind) || PARTITION_OF.matcher(statement).find()) {
					continue;
				}
				SchemaObject object = switch (kind) {
					case "TABLE" -> new SchemaObject("TABLE", name, file);
					case "VIEW" -> new SchemaObject("VIEW", name, file);
					case "SEQUENCE" -> new SchemaObject("SEQUENCE", name, file);
					case "FUNCTION", "PROCEDURE" -> new SchemaObject(
							RETURNS_TRIGGER.matcher(statement).find() ? "TRIGGER FUNCTION" : "FUNCTION", name, file);
					default -> throw new IllegalStateException(file + " creates a " + kind + " (" + name + "), which "
							+ "this test does not know: decide whether the runtime role needs a grant on it, add it to "
							+ "the GRANT block of " + DocumentedGrants.DOCUMENT + " if so, and teach " + MigrationObjects.class
								.getSimpleName() + " the kind");
				};
				objects.putIfAbsent(key(kind(kind), name), object);
			}
		});
		return List.copyOf(objects.values());
	}

	private static String kind(String kind) {
		return switch (kind.toUpperCase(Locale.ROOT)) {
			case "VIEW", "TABLE" -> "TABLE";
			case "PROCEDURE", "FUNCTION" -> "FUNCTION";
			default -> kind.toUpperCase(Locale.ROOT);
		};
	}

	private static String key(String kind, String name) {
		return kind + " " + name.toLowerCase(Locale.ROOT);
	}

	/**
	 * The statements of a migration, each stripped of comments, string literals and dollar-quoted
	 * bodies (a function's body is not DDL of the migration's own).
	 */
	private static List<String> statements(String text) {
		StringBuilder kept = new StringBuilder();
		int i = 0;
		while (i < text.length()) {
			char c = text.charAt(i);
			if (c == '-' && text.startsWith("--", i)) {
				int end = text.indexOf('\n', i);
				i = (end < 0) ? text.length() : end;
			}
			else if (c == '/' && text.startsWith("/*", i)) {
				int end = text.indexOf("*/", i + 2);
				i = (end < 0) ? text.length() : end + 2;
			}
			else if (c == '\'') {
				int end = text.indexOf('\'', i + 1);
				while (end >= 0 && end + 1 < text.length() && text.charAt(end + 1) == '\'') {
					end = text.indexOf('\'', end + 2);
				}
				i = (end < 0) ? text.length() : end + 1;
				kept.append("''");
			}
			else if (c == '$') {
				Matcher tag = Pattern.compile("\\$\\w*\\$").matcher(text).region(i, text.length());
				if (tag.lookingAt()) {
					int end = text.indexOf(tag.group(), tag.end());
					i = (end < 0) ? text.length() : end + tag.group().length();
					kept.append("$$");
				}
				else {
					kept.append(c);
					i++;
				}
			}
			else {
				kept.append(c);
				i++;
			}
		}
		return Stream.of(kept.toString().split(";")).map(String::strip).filter((s) -> !s.isEmpty()).toList();
	}

	private static int version(Path file) {
		Matcher version = VERSION.matcher(file.getFileName().toString());
		version.matches();
		return Integer.parseInt(version.group(1));
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
