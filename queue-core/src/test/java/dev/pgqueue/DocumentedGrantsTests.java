package dev.pgqueue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.pgqueue.MigrationObjects.SchemaObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The runtime role's grants that {@code docs/operations.md} documents cover every table and function
 * the migrations create, and name nothing they do not: a migration that adds a table fails the build
 * until the page grants it.
 */
class DocumentedGrantsTests {

	/** What the runtime does with every table: reads, enqueues, claims and finishes, prunes. */
	private static final Set<String> TABLE_PRIVILEGES = Set.of("SELECT", "INSERT", "UPDATE", "DELETE");

	@Test
	void theDocumentedGrantsCoverEveryTableAndFunctionTheMigrationsCreate() {
		List<SchemaObject> created = MigrationObjects.shipped();
		assertThat(created).as("the migrations' objects, as read")
			.extracting(SchemaObject::name)
			.contains("pgqueue_jobs", "pgqueue_rate_reserve");
		Map<String, Map<String, Set<String>>> granted = DocumentedGrants.read().privileges();

		List<String> missing = new ArrayList<>();
		if (!granted.getOrDefault("SCHEMA", Map.of()).getOrDefault(DocumentedGrants.SCHEMA, Set.of()).contains("USAGE")) {
			missing.add("USAGE on schema " + DocumentedGrants.SCHEMA);
		}
		for (SchemaObject object : created) {
			Set<String> needed = switch (object.kind()) {
				case "TABLE" -> TABLE_PRIVILEGES;
				// pgqueue's views are read only: pgqueue_all_jobs, read by the admin API.
				case "VIEW" -> Set.of("SELECT");
				case "SEQUENCE" -> Set.of("USAGE");
				case "FUNCTION" -> Set.of("EXECUTE");
				// PostgreSQL checks EXECUTE on a trigger's function when the trigger is created, not when it fires.
				case "TRIGGER FUNCTION" -> Set.of();
				default -> throw new IllegalStateException("Unknown kind " + object.kind());
			};
			// A GRANT names a view as it names a table.
			String grantKind = object.kind().equals("VIEW") ? "TABLE" : object.kind();
			Set<String> has = granted.getOrDefault(grantKind, Map.of()).getOrDefault(object.name(), Set.of());
			Set<String> lacking = needed.stream().filter((p) -> !has.contains(p)).collect(Collectors.toCollection(java.util.TreeSet::new));
			if (!lacking.isEmpty()) {
				missing.add(object.kind().toLowerCase(java.util.Locale.ROOT) + " " + object.name() + " (created by "
						+ object.migration() + ") lacks " + String.join(", ", lacking));
			}
		}
		assertThat(missing).as("what the GRANT block of %s, section '%s', leaves out; grant it there:%n%s",
				DocumentedGrants.DOCUMENT, DocumentedGrants.SECTION, DocumentedGrants.read().text()).isEmpty();
	}

	@Test
	void theDocumentedGrantsNameOnlyWhatTheMigrationsCreate() {
		Map<String, Set<String>> created = new LinkedHashMap<>();
		MigrationObjects.shipped()
			.forEach((object) -> created
				.computeIfAbsent(object.kind().equals("VIEW") ? "TABLE" : object.kind(), (k) -> new java.util.HashSet<>())
				.add(object.name()));
		List<String> unknown = new ArrayList<>();
		DocumentedGrants.read().privileges().forEach((kind, objects) -> objects.keySet().forEach((name) -> {
			boolean exists = kind.equals("SCHEMA") ? name.equals(DocumentedGrants.SCHEMA)
					: created.getOrDefault(kind, Set.of()).contains(name);
			if (!exists) {
				unknown.add(kind.toLowerCase(java.util.Locale.ROOT) + " " + name);
			}
		}));
		assertThat(unknown).as("objects the GRANT block of %s names that no migration creates", DocumentedGrants.DOCUMENT)
			.isEmpty();
	}

	@Test
	void aMigrationThatAddsATableOrFunctionIsSeenAndADroppedOneIsForgotten() {
		Map<String, String> migrations = new LinkedHashMap<>();
		migrations.put("V1__a.sql", """
				-- CREATE TABLE in_a_comment (id int);
				CREATE TABLE pgqueue_things (id bigint GENERATED ALWAYS AS IDENTITY, note text DEFAULT 'CREATE TABLE x');
				CREATE UNIQUE INDEX pgqueue_things_idx ON pgqueue_things (note);
				CREATE TABLE IF NOT EXISTS pgqueue_gone (id int);
				CREATE FUNCTION pgqueue_count(p text) RETURNS int LANGUAGE plpgsql AS $$
				BEGIN CREATE TEMP TABLE inside_a_body (id int); RETURN 1; END $$;
				CREATE FUNCTION pgqueue_on_insert() RETURNS trigger LANGUAGE plpgsql AS $body$ BEGIN RETURN NULL; END $body$;
				CREATE SEQUENCE pgqueue_numbers;
				CREATE TABLE pgqueue_logs (at timestamptz) PARTITION BY RANGE (at);
				CREATE TABLE pgqueue_logs_default PARTITION OF pgqueue_logs DEFAULT;
				CREATE VIEW pgqueue_everything AS SELECT * FROM pgqueue_logs;
				""");
		migrations.put("V2__b.sql", """
				DROP TABLE pgqueue_gone;
				ALTER TABLE pgqueue_things RENAME TO pgqueue_items;
				CREATE INDEX CONCURRENTLY IF NOT EXISTS pgqueue_items_note ON pgqueue_items (note);
				""");
		assertThat(MigrationObjects.of(migrations)).containsExactlyInAnyOrder(
				new SchemaObject("TABLE", "pgqueue_items", "V2__b.sql"),
				new SchemaObject("FUNCTION", "pgqueue_count", "V1__a.sql"),
				new SchemaObject("TRIGGER FUNCTION", "pgqueue_on_insert", "V1__a.sql"),
				new SchemaObject("SEQUENCE", "pgqueue_numbers", "V1__a.sql"),
				new SchemaObject("TABLE", "pgqueue_logs", "V1__a.sql"),
				new SchemaObject("VIEW", "pgqueue_everything", "V1__a.sql"));

		assertThatIllegalStateException()
			.isThrownBy(() -> MigrationObjects.of(Map.of("V3__c.sql", "CREATE TYPE pgqueue_mood AS ENUM ('ok');")))
			.withMessageContaining("V3__c.sql creates a TYPE (pgqueue_mood)")
			.withMessageContaining(DocumentedGrants.DOCUMENT);
	}

}
