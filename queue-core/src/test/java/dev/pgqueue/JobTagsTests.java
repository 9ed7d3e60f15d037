package dev.pgqueue;

import java.util.Collections;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.engine.sql.AdminStatements;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tags given at enqueue are stored with their jobs, whatever the insert path (one job, many, unique),
 * exactly as written, and jobs are listed by tag through the tags index; bad tags are refused at
 * enqueue with a message that says what to do.
 */
class JobTagsTests {

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("tags");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void everyInsertPathStoresTheTagsAsGiven() {
		String odd = "quote\" back\\slash, comma {brace} ünï";
		JobClient client = fixture.client();
		UUID one = client.enqueue(JobRequest.of("tags.one", null).tags("customer-42", odd, "customer-42"));
		List<UUID> many = client.enqueueAll(List.of(JobRequest.of("tags.many", 1).tags("import-7"),
				JobRequest.of("tags.many", 2), JobRequest.of("tags.many", 3).tags("import-7", "retry")));
		UUID unique = client.enqueue(JobRequest.of("tags.unique", null).uniqueKey("k-1").tags("customer-42"));
		List<UUID> uniqueMany = client.enqueueAll(List.of(JobRequest.of("tags.unique", 1).uniqueKey("k-2").tags("bulk"),
				JobRequest.of("tags.unique", 2).uniqueKey("k-3")));

		assertThat(tags(one)).as("duplicates dropped, order kept").containsExactly("customer-42", odd);
		assertThat(tags(many.get(0))).containsExactly("import-7");
		assertThat(tags(many.get(1))).isEmpty();
		assertThat(tags(many.get(2))).containsExactly("import-7", "retry");
		assertThat(tags(unique)).containsExactly("customer-42");
		assertThat(tags(uniqueMany.get(0))).containsExactly("bulk");
		assertThat(tags(uniqueMany.get(1))).isEmpty();
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE tags IS NULL",
				Long.class)).as("untagged jobs store no array").isEqualTo(2);

		assertThat(fixture.admin().list(JobQuery.all().tag("customer-42")).jobs()).extracting(JobDetails::id)
			.containsExactly(unique, one);
		assertThat(fixture.admin().list(JobQuery.all().tag("import-7").kind("tags.many")).jobs())
			.extracting(JobDetails::id)
			.containsExactly(many.get(2), many.get(0));
		assertThat(fixture.admin().list(JobQuery.all().tag(odd)).jobs()).extracting(JobDetails::id).containsExactly(one);
		assertThat(fixture.admin().list(JobQuery.all().tag("nobody")).jobs()).isEmpty();
	}

	@Test
	void badTagsAreRefusedAtEnqueueSayingWhatToDo() {
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("tags.bad", null).tags("ok", " "))
			.withMessageContaining("'tags.bad'")
			.withMessageContaining("blank");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("tags.bad", null).tags("x".repeat(JobRequest.MAX_TAG_LENGTH + 1)))
			.withMessageContaining("over the " + JobRequest.MAX_TAG_LENGTH);
		List<String> tooMany = new java.util.ArrayList<>();
		for (int i = 0; i <= JobRequest.MAX_TAGS; i++) {
			tooMany.add("t" + i);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("tags.bad", null).tags(tooMany))
			.withMessageContaining((JobRequest.MAX_TAGS + 1) + " tags")
			.withMessageContaining("over the " + JobRequest.MAX_TAGS);
		assertThat(JobRequest.of("tags.bad", null).tags(Collections.nCopies(50, "same")).tags()).containsExactly("same");
	}

	@Test
	void aListByTagReadsTheTagsIndexAmongManyUntaggedJobs() {
		String finished = fixture.finishedTable();
		fixture.jdbc().update("INSERT INTO " + finished + " (id, public_id, kind, queue, payload, state, attempt, "
				+ "max_attempts, finished_at, tags) SELECT nextval(pg_get_serial_sequence('" + fixture.table()
				+ "', 'id')), gen_random_uuid(), 'tags.bulk', 'bulk', '{}', 'completed', 1, 1, now(), "
				+ "CASE WHEN n % 1000 = 0 THEN ARRAY['rare'] END FROM generate_series(1, 100000) n");
		fixture.jdbc().execute("ANALYZE " + fixture.table() + ", " + finished);
		AdminStatements.Statement list = new AdminStatements(SchemaName.of(fixture.schema().name()), false)
			.listJobs(JobQuery.all().tag("rare"));
		String plan = String.join("\n",
				fixture.jdbc().queryForList("EXPLAIN " + list.sql(), String.class, list.argumentArray()));
		assertThat(plan).contains("pgqueue_finished_jobs_completed_default_tags_idx")
			.doesNotContain("Seq Scan on pgqueue_finished_jobs_completed");
		fixture.jdbc().execute("DELETE FROM " + finished + " WHERE kind = 'tags.bulk'");
	}

	private static List<String> tags(UUID id) {
		return fixture.admin().find(id).orElseThrow().tags();
	}

}
