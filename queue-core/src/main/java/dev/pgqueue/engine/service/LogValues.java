package dev.pgqueue.engine.service;

import org.jspecify.annotations.Nullable;

/**
 * Values from outside (a queue or kind named in a request, a search's filters, a user's name) as a
 * log line may show them: their control characters escaped, so that a value holding a line break
 * cannot forge a log line of its own.
 */
public final class LogValues {

	private LogValues() {
	}

	/** The value's text with every control character written as a backslash escape (n, r, t, or u and four hex digits). */
	public static String printable(@Nullable Object value) {
		String text = String.valueOf(value);
		StringBuilder printable = null;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (!Character.isISOControl(c) && c != '\u2028' && c != '\u2029') {
				if (printable != null) {
					printable.append(c);
				}
				continue;
			}
			if (printable == null) {
				printable = new StringBuilder(text.length() + 8).append(text, 0, i);
			}
			switch (c) {
				case '\n' -> printable.append("\\n");
				case '\r' -> printable.append("\\r");
				case '\t' -> printable.append("\\t");
				default -> printable.append(String.format("\\u%04x", (int) c));
			}
		}
		return (printable != null) ? printable.toString() : text;
	}

}
