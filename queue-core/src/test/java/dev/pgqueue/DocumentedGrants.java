package dev.pgqueue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The grants that {@code docs/operations.md} tells an administrator to give the runtime role, read
 * from the page itself: the first {@code sql} code block of its section "Applying the DDL yourself",
 * written for schema {@code app} and role {@code app_runtime}.
 */
final class DocumentedGrants {

	static final String DOCUMENT = "docs/operations.md";

	static final String SECTION = "Applying the DDL yourself";

	/** The schema and role the block is written for, replaced by a test's own. */
	static final String SCHEMA = "app";

	static final String ROLE = "app_runtime";

	private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)\\s*$");

	private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})\\s*(\\S*)");

	private static final Pattern GRANT = Pattern.compile(
			"GRANT\\s+(.+?)\\s+ON\\s+(?:(TABLE|SEQUENCE|FUNCTION|ROUTINE|PROCEDURE|SCHEMA)\\s+)?(.+?)\\s+TO\\s+(\\S+)",
			Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

	private final String block;

	private DocumentedGrants(String block) {
		this.block = block;
	}

	/** The block as the page shows it now. */
	static DocumentedGrants read() {
		return of(document());
	}

	static DocumentedGrants of(Path document) {
		List<String> lines;
		try {
			lines = Files.readAllLines(document);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return new DocumentedGrants(sqlBlock(lines));
	}

	/** The block's text, for messages. */
	String text() {
		return this.block;
	}

	/**
	 * The block's statements for this schema and role, comments removed, each without its
	 * semicolon, ready to execute.
	 */
	List<String> statements(String schema, String role) {
		String sql = withoutComments(this.block);
		sql = Pattern.compile("\\b" + ROLE + "\\b").matcher(sql).replaceAll(Matcher.quoteReplacement(role));
		sql = Pattern.compile("\\b" + SCHEMA + "\\b(?=\\s*[.;]|\\s+TO\\b)").matcher(sql)
			.replaceAll(Matcher.quoteReplacement(schema));
		List<String> statements = new ArrayList<>();
		for (String statement : sql.split(";")) {
			if (!statement.isBlank()) {
				statements.add(statement.strip());
			}
		}
		return statements;
	}

	/**
	 * What the block grants on each object of schema {@code app}, by kind ({@code TABLE},
	 * {@code FUNCTION}, {@code SEQUENCE}, {@code SCHEMA}) and unqualified name, privileges upper-cased.
	 */
	Map<String, Map<String, Set<String>>> privileges() {
		Map<String, Map<String, Set<String>>> granted = new LinkedHashMap<>();
		for (String statement : statements(SCHEMA, ROLE)) {
			Matcher grant = GRANT.matcher(statement);
			if (!grant.matches()) {
				throw new IllegalStateException("Cannot read '" + statement + "' in the GRANT block of " + DOCUMENT
						+ ", section '" + SECTION + "': write it as GRANT <privileges> ON [kind] <objects> TO " + ROLE);
			}
			String kind = (grant.group(2) != null) ? grant.group(2).toUpperCase(Locale.ROOT) : "TABLE";
			if (kind.equals("ROUTINE") || kind.equals("PROCEDURE")) {
				kind = "FUNCTION";
			}
			Set<String> privileges = new LinkedHashSet<>();
			for (String privilege : grant.group(1).split(",")) {
				privileges.add(privilege.strip().toUpperCase(Locale.ROOT));
			}
			for (String object : splitTopLevel(grant.group(3))) {
				String name = object.replaceAll("\\(.*", "").strip();
				if (!kind.equals("SCHEMA")) {
					if (!name.startsWith(SCHEMA + ".")) {
						throw new IllegalStateException("'" + name + "' in the GRANT block of " + DOCUMENT + " is not "
								+ "qualified with the schema " + SCHEMA + ": write " + SCHEMA + "." + name);
					}
					name = name.substring(SCHEMA.length() + 1);
				}
				granted.computeIfAbsent(kind, (k) -> new LinkedHashMap<>())
					.computeIfAbsent(name, (k) -> new LinkedHashSet<>())
					.addAll(privileges);
			}
		}
		return granted;
	}

	/** The repository's {@value #DOCUMENT}, found from wherever the tests run. */
	static Path document() {
		Path start = Path.of("").toAbsolutePath();
		for (Path dir = start; dir != null; dir = dir.getParent()) {
			Path candidate = dir.resolve(DOCUMENT);
			if (Files.isRegularFile(candidate) && Files.isRegularFile(dir.resolve("README.md"))) {
				return candidate;
			}
		}
		throw new IllegalStateException("No " + DOCUMENT + " at or above " + start);
	}

	private static String sqlBlock(List<String> lines) {
		boolean inSection = false;
		int sectionLevel = 0;
		String fence = null;
		StringBuilder block = null;
		for (String line : lines) {
			if (fence != null) {
				if (line.strip().equals(fence)) {
					if (block != null) {
						return block.toString();
					}
					fence = null;
				}
				else if (block != null) {
					block.append(line).append('\n');
				}
				continue;
			}
			Matcher opening = FENCE.matcher(line);
			if (opening.find()) {
				fence = opening.group(1);
				if (inSection && opening.group(2).equalsIgnoreCase("sql")) {
					block = new StringBuilder();
				}
				continue;
			}
			Matcher heading = HEADING.matcher(line);
			if (heading.matches() && line.strip().startsWith("#")) {
				int level = line.strip().indexOf(' ');
				if (inSection && level <= sectionLevel) {
					break;
				}
				if (heading.group(1).equals(SECTION)) {
					inSection = true;
					sectionLevel = level;
				}
			}
		}
		throw new IllegalStateException(DOCUMENT + " has no ```sql block in its section '" + SECTION + "'"
				+ (inSection ? "" : " (no such heading)") + ": the runtime role's grants are read from there");
	}

	private static String withoutComments(String sql) {
		return sql.replaceAll("--[^\\n]*", "");
	}

	/** Splits on the commas outside parentheses (a function's argument list keeps its own). */
	private static List<String> splitTopLevel(String text) {
		List<String> parts = new ArrayList<>();
		int depth = 0;
		int start = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '(') {
				depth++;
			}
			else if (c == ')') {
				depth--;
			}
			else if (c == ',' && depth == 0) {
				parts.add(text.substring(start, i).strip());
				start = i + 1;
			}
		}
		parts.add(text.substring(start).strip());
		return parts;
	}

}
