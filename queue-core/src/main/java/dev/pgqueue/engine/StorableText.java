package dev.pgqueue.engine;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * What PostgreSQL's UTF-8 text can hold as it is, for the names operators pass to the engine (a queue
 * to pause, a schedule to run) and the JSON it stores: not U+0000, which fails the statement, and not
 * half of a surrogate pair without its other half, which the driver would store as {@code ?}. The
 * requests users build check the same in the API's own classes ({@code JobRequest}, {@code JobQuery}).
 */
final class StorableText {

	private StorableText() {
	}

	/** Why the text cannot be stored as it is, or {@code null} when it can. */
	static @Nullable String problem(String value) {
		if (value.indexOf(0) >= 0) {
			return "holds the character U+0000 (NUL), which PostgreSQL cannot store in text";
		}
		int lone = loneSurrogate(value);
		if (lone >= 0) {
			return "holds half of a surrogate pair at index " + lone + " (U+"
					+ Integer.toHexString(value.charAt(lone)).toUpperCase(Locale.ROOT)
					+ ") without its other half, which PostgreSQL would store as '?'";
		}
		return null;
	}

	/**
	 * Refuses a text that cannot be stored as it is.
	 * @param what what the text is, to begin the message ("The queue name 'x'")
	 */
	static void check(String what, String value) {
		String problem = problem(value);
		if (problem != null) {
			throw new IllegalArgumentException(what + " " + problem + "; pass whole characters, without U+0000");
		}
	}

	/** The index of the first half of a surrogate pair that lacks its other half, or -1. */
	static int loneSurrogate(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				return i;
			}
		}
		return -1;
	}

}
