/**
 * The jobs table: {@link dev.pgqueue.schema.QueueMigrator} creates and upgrades it with pgqueue's
 * own Flyway instance (an application may replace it), and {@link dev.pgqueue.schema.SchemaName}
 * validates the schema it lives in.
 */
@NullMarked
package dev.pgqueue.schema;

import org.jspecify.annotations.NullMarked;
