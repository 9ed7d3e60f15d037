package dev.pgqueue.schema;

import java.util.Locale;
import java.util.regex.Pattern;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * A validated PostgreSQL schema name, quoted wherever it is written into SQL.
 *
 * <p>Only unquoted-style identifiers are accepted (a letter or underscore, then letters, digits or
 * underscores, at most 63 bytes) so that the same name works in Flyway, in {@code search_path} and
 * in hand-written DDL without surprises about case folding.
 */
public final class SchemaName {

	/** The schema of the jobs table unless configured otherwise. */
	public static final String DEFAULT = "public";

	private static final String KEY = "pgqueue.schema.name";

	private static final Pattern VALID = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

	private final String name;

	private SchemaName(String name) {
		this.name = name;
	}

	/**
	 * Validates {@code name}.
	 * @throws IllegalArgumentException naming the setting and what is allowed
	 */
	public static SchemaName of(@Nullable String name) {
		if (name == null || !VALID.matcher(name).matches()) {
			throw new InvalidQueueConfigurationException(KEY, KEY + " '" + name
					+ "' is not a valid schema name: use lower-case letters, digits and underscores, starting with a"
					+ " letter or underscore, at most 63 characters", "Set " + KEY + " to a name such as 'jobs'.");
		}
		if (name.startsWith("pg_")) {
			throw new InvalidQueueConfigurationException(KEY, KEY + " '" + name
					+ "' is reserved: PostgreSQL keeps names starting with pg_ for itself",
					"Choose a name that does not start with pg_.");
		}
		return new SchemaName(name.toLowerCase(Locale.ROOT));
	}

	/** The bare name. */
	public String value() {
		return this.name;
	}

	/** The name quoted for SQL. */
	public String quoted() {
		return "\"" + this.name + "\"";
	}

	/** The quoted, schema-qualified name of a table in this schema. */
	public String qualify(String table) {
		return quoted() + ".\"" + table + "\"";
	}

	@Override
	public String toString() {
		return this.name;
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof SchemaName that) && this.name.equals(that.name);
	}

	@Override
	public int hashCode() {
		return this.name.hashCode();
	}

}
