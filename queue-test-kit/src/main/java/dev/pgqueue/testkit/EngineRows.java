package dev.pgqueue.testkit;

import dev.pgqueue.engine.DatabaseEngine;

/**
 * One engine of the application under test and the reads of its jobs table: the application's only
 * engine, or one shard's.
 */
record EngineRows(DatabaseEngine engine, JobRows rows) {

	static EngineRows of(DatabaseEngine engine) {
		return new EngineRows(engine, new JobRows(engine.jobs().jdbcTemplate(), engine.settings().schema()));
	}

}
