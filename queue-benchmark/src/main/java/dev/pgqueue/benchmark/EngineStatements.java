package dev.pgqueue.benchmark;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;

import dev.pgqueue.schema.SchemaName;

/**
 * Statement texts of the engine's statement classes that are not public ({@code UniqueStatements},
 * {@code ScheduleStatements} in {@code dev.pgqueue.engine.sql}: nothing outside their package uses
 * them, so the engine keeps them package-private). Read reflectively, so that the raw baselines run
 * the very texts the engine runs, as {@link RawQueue} does with the public {@code JobStatements}; a
 * renamed class or field fails here, by name, rather than leaving a copy to drift.
 */
final class EngineStatements {

	private static final String PACKAGE = "dev.pgqueue.engine.sql.";

	private EngineStatements() {
	}

	/** A statement of {@code UniqueStatements} (unique jobs) for {@code schema}. */
	static String unique(SchemaName schema, String field) {
		return read("UniqueStatements", schema, field);
	}

	/** A statement of {@code ScheduleStatements} (recurring jobs) for {@code schema}. */
	static String schedules(SchemaName schema, String field) {
		return read("ScheduleStatements", schema, field);
	}

	private static String read(String className, SchemaName schema, String field) {
		try {
			Class<?> type = Class.forName(PACKAGE + className);
			Constructor<?> constructor = type.getDeclaredConstructor(SchemaName.class);
			constructor.setAccessible(true);
			Object statements = constructor.newInstance(schema);
			Field text = type.getDeclaredField(field);
			text.setAccessible(true);
			return (String) text.get(statements);
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			throw new IllegalStateException("Could not read the engine's statement " + className + "." + field
					+ " for the raw baseline (renamed in the engine?): " + ex, ex);
		}
	}

}
