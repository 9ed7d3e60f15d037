package dev.pgqueue.autoconfigure;

import dev.pgqueue.schema.SchemaName;

/** The schema holding the jobs table, under {@code pgqueue.schema}. */
public class QueueSchemaProperties {

	/**
	 * Schema holding the jobs table: lower-case letters, digits and underscores.
	 */
	private String name = SchemaName.DEFAULT;

	/**
	 * Whether pgqueue creates and upgrades its table with its own Flyway instance (history in
	 * pgqueue_schema_history). Turn off when DDL is applied by other means; the table must then
	 * exist at start-up.
	 */
	private boolean migrate = true;

	public String getName() {
		return this.name;
	}

	public void setName(String name) {
		this.name = name;
	}

	public boolean isMigrate() {
		return this.migrate;
	}

	public void setMigrate(boolean migrate) {
		this.migrate = migrate;
	}

}
