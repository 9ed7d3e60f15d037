package dev.pgqueue.schema;

import java.util.Collection;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.core.NativeDetector;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Creates and upgrades the queue's tables with a Flyway instance of its own.
 *
 * <p>The instance keeps its history in {@code pgqueue_schema_history}, apart from the
 * application's {@code flyway_schema_history}, and is never exposed as a {@code Flyway} bean: Spring
 * Boot's own Flyway support backs off when one exists, which would silently stop the application's
 * migrations. With migration turned off it only checks that the jobs table exists, so that a
 * missing table fails at start-up rather than on the first poll. Given a setting for the
 * {@link NotifyTrigger notify trigger}, it then enables or disables that trigger to match. Given
 * queues that claim by buckets ({@link #withBucketQueues}), it then creates the
 * {@link BucketClaimIndex bucket claim index} they read, or, not migrating, checks that it exists.
 *
 * <p>In a native image, where Flyway cannot list class path resources, the migrations are listed by
 * {@link NativeImageMigrations}.
 */
public class QueueMigrator implements InitializingBean {

	public static final String HISTORY_TABLE = "pgqueue_schema_history";

	public static final String LOCATION = "classpath:dev/pgqueue/schema/migration";

	/**
	 * Whether a table exists, the check made instead of migrating. Parameter: the table's
	 * schema-qualified, quoted name. Returns one row, true or false.
	 */
	static final String TABLE_EXISTS = """
			SELECT to_regclass(?) IS NOT NULL""";

	/**
	 * The version of the last migration this migrator applied with success, read from its history
	 * table. Parameter: none (the table's schema-qualified name is part of the text). Returns at most
	 * one row.
	 */
	static final String SCHEMA_VERSION = """
			SELECT version FROM %s WHERE success AND version IS NOT NULL ORDER BY installed_rank DESC LIMIT 1""";

	private static final Logger logger = LoggerFactory.getLogger(QueueMigrator.class);

	private final DataSource dataSource;

	private final SchemaName schema;

	private final boolean migrate;

	private final @Nullable Boolean notifyTrigger;

	private final List<String> bucketQueues;

	/** A migrator that leaves the notify trigger as it is. */
	public QueueMigrator(DataSource dataSource, SchemaName schema, boolean migrate) {
		this(dataSource, schema, migrate, null);
	}

	/**
	 * @param notifyTrigger whether the trigger notifying the queues of jobs inserted by plain SQL is
	 * to be enabled or disabled once the table is there; {@code null} leaves it as it is
	 */
	public QueueMigrator(DataSource dataSource, SchemaName schema, boolean migrate, @Nullable Boolean notifyTrigger) {
		this(dataSource, schema, migrate, notifyTrigger, List.of());
	}

	private QueueMigrator(DataSource dataSource, SchemaName schema, boolean migrate, @Nullable Boolean notifyTrigger,
			List<String> bucketQueues) {
		this.dataSource = dataSource;
		this.schema = schema;
		this.migrate = migrate;
		this.notifyTrigger = notifyTrigger;
		this.bucketQueues = List.copyOf(bucketQueues);
	}

	/**
	 * This migrator, for an application whose queues named here claim by buckets: once the table is
	 * there, it creates the index their claims read (or, not migrating, checks that it exists). None
	 * unless given: an installation without such queues never writes that index.
	 */
	public QueueMigrator withBucketQueues(Collection<String> queues) {
		return new QueueMigrator(this.dataSource, this.schema, this.migrate, this.notifyTrigger, List.copyOf(queues));
	}

	@Override
	public void afterPropertiesSet() {
		if (this.migrate) {
			migrate();
		}
		else {
			verify();
		}
		if (this.notifyTrigger != null) {
			new NotifyTrigger(this.dataSource, this.schema).set(this.notifyTrigger);
		}
		if (!this.migrate && !this.bucketQueues.isEmpty()) {
			new BucketClaimIndex(this.dataSource, this.schema).require(this.bucketQueues);
		}
	}

	/** Applies pending migrations to the schema, creating it if needed. */
	public MigrateResult migrate() {
		ClassLoader classLoader = getClass().getClassLoader();
		return migrate(NativeDetector.inNativeImage() ? new NativeImageMigrations(classLoader) : null);
	}

	/** Migrates with the given migrations, or those Flyway finds itself when {@code null}. */
	MigrateResult migrate(@Nullable ResourceProvider migrations) {
		FluentConfiguration configuration = Flyway.configure(getClass().getClassLoader())
			.dataSource(this.dataSource)
			.schemas(this.schema.value())
			.createSchemas(true)
			.table(HISTORY_TABLE)
			.locations(LOCATION)
			// Flyway's default lock is a transaction-scoped advisory lock, held in a transaction that stays
			// open while migrations run; CREATE INDEX CONCURRENTLY waits for every open transaction, that
			// one included, and would wait forever. A session-scoped lock still keeps two instances from
			// migrating at once.
			.configuration(Map.of("flyway.postgresql.transactional.lock", "false"))
			// The schema usually holds the application's own tables already.
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.cleanDisabled(true);
		if (migrations != null) {
			configuration.resourceProvider(migrations);
		}
		MigrateResult result = configuration.load().migrate();
		if (result.migrationsExecuted > 0) {
			logger.info("pgqueue schema '{}' migrated to version {} ({} migrations)", this.schema,
					result.targetSchemaVersion, result.migrationsExecuted);
		}
		if (!this.bucketQueues.isEmpty()) {
			new BucketClaimIndex(this.dataSource, this.schema).create(this.bucketQueues);
		}
		return result;
	}

	private void verify() {
		Boolean exists = new JdbcTemplate(this.dataSource).queryForObject(TABLE_EXISTS, Boolean.class,
				this.schema.qualify("pgqueue_jobs"));
		if (!Boolean.TRUE.equals(exists)) {
			throw new InvalidQueueConfigurationException("pgqueue.schema.migrate", "Table " + this.schema.value()
					+ ".pgqueue_jobs does not exist and pgqueue.schema.migrate is false",
					"Apply the migrations under " + LOCATION.substring(10) + " (in the queue-core jar) to schema '"
							+ this.schema.value() + "', or set pgqueue.schema.migrate=true to let pgqueue create it.");
		}
	}

	/**
	 * The version of pgqueue's schema as its own migrations left it (such as {@code 14}), read from
	 * {@value #HISTORY_TABLE}; {@code null} when that table does not exist, as where the DDL is
	 * applied by other means ({@code pgqueue.schema.migrate=false}).
	 */
	public @Nullable String schemaVersion() {
		JdbcTemplate jdbc = new JdbcTemplate(this.dataSource);
		String table = this.schema.qualify(HISTORY_TABLE);
		if (!Boolean.TRUE.equals(jdbc.queryForObject(TABLE_EXISTS, Boolean.class, table))) {
			return null;
		}
		List<String> versions = jdbc.queryForList(SCHEMA_VERSION.formatted(table), String.class);
		return versions.isEmpty() ? null : versions.get(0);
	}

	public SchemaName schema() {
		return this.schema;
	}

}
