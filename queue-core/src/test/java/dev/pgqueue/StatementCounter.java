package dev.pgqueue;

/**
 * Counts the INSERT, UPDATE and DELETE statements run on a fixture's jobs table from its creation on
 * (a retry moves failed jobs back into it with an INSERT), with a
 * statement-level trigger: how a test sees that a bulk operation worked in bounded batches, each its
 * own statement, rather than in one statement that touched every row.
 */
final class StatementCounter {

	private final QueueFixture fixture;

	private final String counter;

	private StatementCounter(QueueFixture fixture) {
		this.fixture = fixture;
		String schema = fixture.table().substring(0, fixture.table().lastIndexOf('.'));
		this.counter = schema + ".counted_statements";
		fixture.jdbc().execute("CREATE TABLE " + this.counter + " (operation text NOT NULL)");
		fixture.jdbc().execute("CREATE FUNCTION " + schema + ".count_statement() RETURNS trigger LANGUAGE plpgsql AS "
				+ "$$ BEGIN INSERT INTO " + this.counter + " VALUES (TG_OP); RETURN NULL; END $$");
		fixture.jdbc().execute("CREATE TRIGGER count_statement AFTER INSERT OR UPDATE OR DELETE ON " + fixture.table()
				+ " FOR EACH STATEMENT EXECUTE FUNCTION " + schema + ".count_statement()");
	}

	static StatementCounter on(QueueFixture fixture) {
		return new StatementCounter(fixture);
	}

	/** Statements counted so far. */
	int count() {
		return this.fixture.jdbc().queryForObject("SELECT count(*)::int FROM " + this.counter, Integer.class);
	}

}
