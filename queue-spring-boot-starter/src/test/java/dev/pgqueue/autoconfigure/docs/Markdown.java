package dev.pgqueue.autoconfigure.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Just enough of Markdown, as GitHub renders it, to check the repository's documents: which lines lie
 * outside fenced code blocks, the fenced code blocks themselves, the anchors its headings get, its
 * links and its table rows.
 */
final class Markdown {

	private static final Pattern FENCE = Pattern.compile("^ {0,3}(`{3,}|~{3,})");

	private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)(?:\\s+#+)?\\s*$");

	private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");

	/** The target of an inline link or image, whatever its text (which may start on an earlier line). */
	private static final Pattern INLINE_LINK = Pattern.compile("\\]\\(\\s*<?([^()\\s<>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

	private static final Pattern REFERENCE_DEFINITION = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*<?(\\S+?)>?(?:\\s+.*)?$");

	private static final Pattern LINK_IN_HEADING = Pattern.compile("!?\\[([^\\]]*)\\]\\([^)]*\\)");

	private static final Pattern NOT_IN_ANCHOR = Pattern.compile("[^\\p{L}\\p{N} _-]");

	private final Path file;

	private final List<String> lines;

	private Markdown(Path file, List<String> lines) {
		this.file = file;
		this.lines = lines;
	}

	static Markdown read(Path file) {
		try {
			return new Markdown(file, Files.readAllLines(file));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	Path file() {
		return this.file;
	}

	int lineCount() {
		return this.lines.size();
	}

	/** Lines outside fenced code blocks, numbered from 1. */
	List<Line> prose() {
		List<Line> prose = new ArrayList<>();
		String fence = null;
		for (int i = 0; i < this.lines.size(); i++) {
			String text = this.lines.get(i);
			Matcher opening = FENCE.matcher(text);
			if (fence == null) {
				if (opening.find()) {
					fence = opening.group(1);
				}
				else {
					prose.add(new Line(i + 1, text));
				}
			}
			else if (opening.find() && opening.group(1).charAt(0) == fence.charAt(0)
					&& opening.group(1).length() >= fence.length() && text.strip().equals(opening.group(1))) {
				fence = null;
			}
		}
		return prose;
	}

	/**
	 * The fenced code blocks, in order: each with the line of its opening fence, its info string, its
	 * lines (less the fence's indentation, as CommonMark strips it) and the line just above the fence.
	 * A block left open runs to the end of the document, as GitHub renders it.
	 */
	List<CodeBlock> codeBlocks() {
		List<CodeBlock> blocks = new ArrayList<>();
		String fence = null;
		int opened = 0;
		int indent = 0;
		String info = null;
		List<String> body = null;
		for (int i = 0; i < this.lines.size(); i++) {
			String text = this.lines.get(i);
			Matcher opening = FENCE.matcher(text);
			if (fence == null) {
				if (opening.find()) {
					fence = opening.group(1);
					opened = i + 1;
					indent = opening.start(1);
					info = text.substring(opening.end()).strip();
					body = new ArrayList<>();
				}
			}
			else if (opening.find() && opening.group(1).charAt(0) == fence.charAt(0)
					&& opening.group(1).length() >= fence.length() && text.strip().equals(opening.group(1))) {
				blocks.add(new CodeBlock(opened, info, List.copyOf(body), lineAbove(opened)));
				fence = null;
			}
			else {
				body.add(unindent(text, indent));
			}
		}
		if (fence != null) {
			blocks.add(new CodeBlock(opened, info, List.copyOf(body), lineAbove(opened)));
		}
		return blocks;
	}

	private String lineAbove(int line) {
		return (line > 1) ? this.lines.get(line - 2) : "";
	}

	private static String unindent(String text, int indent) {
		int strip = 0;
		while (strip < indent && strip < text.length() && text.charAt(strip) == ' ') {
			strip++;
		}
		return text.substring(strip);
	}

	/** The headings outside code blocks, in order. */
	List<Heading> headings() {
		List<Heading> headings = new ArrayList<>();
		for (Line line : prose()) {
			Matcher heading = HEADING.matcher(line.text());
			if (heading.matches()) {
				headings.add(new Heading(line.number(), heading.group(1).length(), heading.group(2)));
			}
		}
		return headings;
	}

	/**
	 * The anchors GitHub gives the headings: the heading's text lower-cased, every character but
	 * letters, digits, spaces, hyphens and underscores removed, spaces turned into hyphens; a repeated
	 * anchor gets {@code -1}, {@code -2}, … in order.
	 */
	Set<String> anchors() {
		Set<String> anchors = new LinkedHashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		for (Heading heading : headings()) {
			String anchor = anchor(heading.text());
			Integer count = seen.get(anchor);
			if (count == null) {
				seen.put(anchor, 0);
				anchors.add(anchor);
			}
			else {
				seen.put(anchor, count + 1);
				anchors.add(anchor + "-" + (count + 1));
			}
		}
		return anchors;
	}

	static String anchor(String headingText) {
		String text = LINK_IN_HEADING.matcher(headingText).replaceAll("$1");
		text = text.toLowerCase(Locale.ROOT);
		text = NOT_IN_ANCHOR.matcher(text).replaceAll("");
		return text.replace(' ', '-');
	}

	/** Every link target outside code: inline links and images, and reference definitions. */
	List<Link> links() {
		List<Link> links = new ArrayList<>();
		for (Line line : prose()) {
			String text = CODE_SPAN.matcher(line.text()).replaceAll("");
			Matcher inline = INLINE_LINK.matcher(text);
			while (inline.find()) {
				links.add(new Link(line.number(), inline.group(1)));
			}
			Matcher definition = REFERENCE_DEFINITION.matcher(text);
			if (definition.matches()) {
				links.add(new Link(line.number(), definition.group(1)));
			}
		}
		return links;
	}

	/** The cells of every table row outside code blocks, header and separator rows included. */
	List<Row> tableRows() {
		List<Row> rows = new ArrayList<>();
		for (Line line : prose()) {
			String text = line.text().strip();
			if (text.startsWith("|") && text.endsWith("|") && text.length() > 1) {
				String inner = text.substring(1, text.length() - 1);
				List<String> cells = Stream.of(inner.split("(?<!\\\\)\\|", -1)).map(String::strip).toList();
				rows.add(new Row(line.number(), cells));
			}
		}
		return rows;
	}

	/** The contents of the code spans in a piece of text. */
	static List<String> codeSpans(String text) {
		List<String> spans = new ArrayList<>();
		Matcher span = CODE_SPAN.matcher(text);
		while (span.find()) {
			spans.add(span.group(2).strip());
		}
		return spans;
	}

	record Line(int number, String text) {
	}

	/**
	 * A fenced code block.
	 * @param line the line of its opening fence, from 1
	 * @param info what follows the opening fence, such as {@code yaml}
	 * @param lines its lines, without the fences
	 * @param lineAbove the line just above the opening fence ("" for none)
	 */
	record CodeBlock(int line, String info, List<String> lines, String lineAbove) {

		/** The first word of the info string, lower case: the language GitHub highlights it as. */
		String language() {
			String[] words = this.info.split("\\s+", 2);
			return words[0].toLowerCase(Locale.ROOT);
		}

		String text() {
			return String.join("\n", this.lines) + "\n";
		}

	}

	record Heading(int line, int level, String text) {
	}

	record Link(int line, String target) {
	}

	record Row(int line, List<String> cells) {
	}

}
