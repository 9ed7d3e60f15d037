package dev.pgqueue.autoconfigure;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Texts of a job that may carry the application's data, as a reader not allowed to see values sees
 * them ({@code show-values} of the endpoint and the dashboard): an error keeps the classes of its
 * exceptions and its stack frames, which say where and what failed, and loses every message, which
 * may quote a customer's name, an address or a token; a message a listener wrote (its progress, an
 * attempt's exception message) is hidden whole.
 */
public final class UserTexts {

	/** What a hidden value shows, as Spring Boot's own endpoints show it. */
	public static final String HIDDEN = "******";

	/**
	 * A line that names an exception: an optional prefix the engine writes (a last attempt) or the
	 * JVM writes (a cause, a suppressed exception), a qualified class name, then its message if any.
	 */
	private static final Pattern HEADLINE = Pattern.compile(
			"^(\\s*(?:Attempt \\d+ of \\d+ was the last: )?(?:Caused by: |Suppressed: )?"
					+ "(?:[A-Za-z_$][\\w$]*\\.)+[A-Za-z_$][\\w$]*)(:.*)?$");

	private UserTexts() {
	}

	/** The text as it is, or {@link #HIDDEN}; {@code null} stays {@code null}. */
	public static @Nullable String message(@Nullable String text, boolean shown) {
		return (text == null || shown) ? text : HIDDEN;
	}

	/**
	 * The error text as it is, or with every message hidden: each exception's class and each stack
	 * frame kept, every other line (a message, a message's further lines) replaced by one
	 * {@link #HIDDEN}.
	 */
	public static @Nullable String errorText(@Nullable String text, boolean shown) {
		if (text == null || shown) {
			return text;
		}
		StringBuilder masked = new StringBuilder(Math.min(text.length(), 1024));
		boolean hiding = false;
		for (String line : text.split("\n", -1)) {
			String stripped = line.strip();
			String kept;
			if (stripped.startsWith("at ") || (stripped.startsWith("... ") && stripped.endsWith(" more"))) {
				kept = line;
			}
			else {
				Matcher headline = HEADLINE.matcher(line);
				kept = headline.matches() ? headline.group(1) + ((headline.group(2) != null) ? ": " + HIDDEN : "")
						: null;
			}
			if (kept == null && hiding) {
				continue;
			}
			if (!masked.isEmpty()) {
				masked.append('\n');
			}
			masked.append((kept != null) ? kept : HIDDEN);
			hiding = (kept == null);
		}
		return masked.toString();
	}

}
