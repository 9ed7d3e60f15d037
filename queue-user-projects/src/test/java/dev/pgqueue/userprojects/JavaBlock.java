package dev.pgqueue.userprojects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A {@code ```java} block of the documentation: the file and line of its opening fence, its code, and
 * the marker on the line right before the fence that says how it compiles, if it has one. Without a
 * marker a block is a complete compilation unit, compiled as it is.
 *
 * <p>A marker is an HTML comment, invisible where the Markdown is rendered:
 * {@code <!-- compile: KIND [context=NAME] [placeholders] -->}, where KIND is {@code unit} (imports
 * and types), {@code members} (fields, methods and nested types, wrapped in a class that extends the
 * context's {@code Context}) or {@code statements} (wrapped in a method of such a class); NAME is a
 * file {@code src/test/docs-contexts/NAME.java} of this module; {@code placeholders} allows
 * {@code { ... }} bodies and lone {@code ...} lines.
 *
 * @param file the Markdown file, relative to the repository's root
 * @param line the line of the opening fence (from 1)
 * @param marker how the block compiles, {@code null} for a complete compilation unit
 * @param code the lines between the fences
 */
record JavaBlock(String file, int line, @Nullable Marker marker, List<String> code) {

	/** The prefix of this test's markers; {@code <!-- block: … -->} comments belong to another test. */
	static final String MARKER_PREFIX = "<!-- compile:";

	private static final Pattern FENCE = Pattern.compile("^(\\s*)(`{3,})\\s*([^`\\s]*).*$");

	/** Where a reader finds the block. */
	String where() {
		return this.file + ":" + this.line;
	}

	/** The Markdown line of one line of the code (from 0). */
	int lineOf(int index) {
		return this.line + 1 + index;
	}

	/** Whether the block starts as a compilation unit does, with a package or imports. */
	boolean declaresImportsOrPackage() {
		return this.code.stream().anyMatch((line) -> line.startsWith("package ") || line.startsWith("import "));
	}

	/** A package of this block's own: {@code docs.guide_l226} for the block whose fence is line 226 of guide.md. */
	String ownPackage() {
		String name = Path.of(this.file).getFileName().toString().replaceFirst("\\.md$", "");
		return "docs." + name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_") + "_l" + this.line;
	}

	/**
	 * Every {@code ```java} block of one Markdown file, in order.
	 * @param root the repository's root
	 * @param file the Markdown file, relative to the root
	 * @param problems where a malformed marker is reported
	 */
	static List<JavaBlock> of(Path root, String file, List<String> problems) throws IOException {
		List<String> lines = Files.readAllLines(root.resolve(file));
		List<JavaBlock> blocks = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			Matcher open = FENCE.matcher(lines.get(i));
			if (!open.matches()) {
				continue;
			}
			String fence = open.group(2);
			int close = i + 1;
			while (close < lines.size() && !lines.get(close).trim().equals(fence)) {
				close++;
			}
			if (open.group(3).equals("java")) {
				String where = file + ":" + (i + 1);
				String before = (i > 0) ? lines.get(i - 1).trim() : "";
				Marker marker = before.startsWith(MARKER_PREFIX) ? Marker.parse(before, where, problems) : null;
				String indent = open.group(1);
				List<String> code = lines.subList(i + 1, Math.min(close, lines.size()))
					.stream()
					.map((line) -> line.startsWith(indent) ? line.substring(indent.length()) : line)
					.toList();
				blocks.add(new JavaBlock(file, i + 1, marker, code));
			}
			i = close;
		}
		return blocks;
	}

	/** How a block that is not a complete compilation unit compiles. */
	enum Kind {

		/** Imports and types; the context adds the imports and types they rely on. */
		UNIT,

		/** Fields, methods and nested types, wrapped in a class that extends the context's {@code Context}. */
		MEMBERS,

		/** Statements, wrapped in a method of a class that extends the context's {@code Context}. */
		STATEMENTS

	}

	/**
	 * A block's marker.
	 * @param kind what the block is
	 * @param context the name of its context, {@code null} for none
	 * @param placeholders whether the block may hold {@code { ... }} bodies and lone {@code ...} lines
	 */
	record Marker(Kind kind, @Nullable String context, boolean placeholders) {

		static final String SYNTAX = "<!-- compile: unit|members|statements [context=NAME] [placeholders] -->";

		static @Nullable Marker parse(String comment, String where, List<String> problems) {
			if (!comment.endsWith("-->")) {
				problems.add(where + ": the marker " + comment + " before this block does not end with '-->' on its line; "
						+ "write it as " + SYNTAX);
				return null;
			}
			String[] words = comment.substring(MARKER_PREFIX.length(), comment.length() - 3).trim().split("\\s+");
			Kind kind = switch (words[0]) {
				case "unit" -> Kind.UNIT;
				case "members" -> Kind.MEMBERS;
				case "statements" -> Kind.STATEMENTS;
				default -> null;
			};
			if (kind == null) {
				problems.add(where + ": unknown kind '" + words[0] + "' in the marker " + comment
						+ " before this block; write " + SYNTAX);
				return null;
			}
			String context = null;
			boolean placeholders = false;
			for (int i = 1; i < words.length; i++) {
				if (words[i].startsWith("context=") && words[i].length() > "context=".length()) {
					context = words[i].substring("context=".length());
				}
				else if (words[i].equals("placeholders")) {
					placeholders = true;
				}
				else {
					problems.add(where + ": unknown option '" + words[i] + "' in the marker " + comment
							+ " before this block; write " + SYNTAX);
					return null;
				}
			}
			if (context == null && kind != Kind.UNIT) {
				problems.add(where + ": the marker " + comment + " names no context, which a " + words[0]
						+ " block is wrapped in; add context=NAME (a file src/test/docs-contexts/NAME.java of "
						+ "queue-user-projects)");
				return null;
			}
			return new Marker(kind, context, placeholders);
		}

	}

}
