package dev.pgqueue.schema;

import java.io.IOException;
import java.io.Reader;
import java.util.Arrays;
import java.util.List;

import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.core.api.resource.LoadableResource;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.FileCopyUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * pgqueue's migrations in a native image: every file under the migration location is included by
 * the hints that {@code aot.factories} lists, and {@link NativeImageMigrations} hands Flyway all of
 * them, {@code .conf} files included, so that a fresh schema migrates as it does on the JVM.
 */
class NativeImageMigrationsTests {

	@Test
	void everyMigrationFileIsIncludedInANativeImage() throws IOException {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories().load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));

		List<String> files = migrationFiles();
		assertThat(files).as("the migration files on the class path")
			.isNotEmpty()
			.anyMatch((file) -> file.endsWith(".conf"));
		for (String file : files) {
			assertThat(RuntimeHintsPredicates.resource().forResource(QueueSchemaRuntimeHints.MIGRATIONS + "/" + file))
				.as("a resource hint for %s", file)
				.accepts(hints);
		}
	}

	@Test
	void aFreshSchemaMigratesWithTheMigrationsListedForANativeImage() throws IOException {
		long scripts = migrationFiles().stream().filter((file) -> file.endsWith(".sql")).count();
		try (TestSchema schema = TestDatabase.get().createSchema("native_migrations")) {
			QueueMigrator migrator = new QueueMigrator(schema.dataSource(), SchemaName.of(schema.name()), true);

			MigrateResult result = migrator.migrate(new NativeImageMigrations(getClass().getClassLoader()));

			assertThat(result.success).isTrue();
			assertThat(result.migrationsExecuted).isEqualTo((int) scripts);
			assertThat(schema.jdbcTemplate()
				.queryForObject("SELECT to_regclass(?) IS NOT NULL", Boolean.class,
						SchemaName.of(schema.name()).qualify("pgqueue_jobs")))
				.isTrue();
		}
	}

	@Test
	void eachScriptsConfigurationIsFoundBesideIt() throws IOException {
		NativeImageMigrations migrations = new NativeImageMigrations(getClass().getClassLoader());
		List<String> configurations = migrationFiles().stream().filter((file) -> file.endsWith(".conf")).toList();

		assertThat(configurations).isNotEmpty();
		for (String configuration : configurations) {
			// Flyway asks for a script's configuration by the script's path relative to the location.
			LoadableResource resource = migrations.getResource(configuration);
			assertThat(resource).as("the resource %s", configuration).isNotNull();
			try (Reader reader = resource.read()) {
				assertThat(FileCopyUtils.copyToString(reader)).contains("executeInTransaction=false");
			}
		}
		assertThat(migrations.getResource("V1__no_such_script.sql.conf")).isNull();
	}

	/** The files under the migration location, as the class path has them. */
	private List<String> migrationFiles() throws IOException {
		Resource[] resources = new PathMatchingResourcePatternResolver(getClass().getClassLoader())
			.getResources("classpath*:" + QueueSchemaRuntimeHints.MIGRATIONS + "/*");
		return Arrays.stream(resources).map(Resource::getFilename).sorted().toList();
	}

}
