package dev.pgqueue.testkit;

import dev.pgqueue.engine.QueueEngine;

/**
 * One engine of the application under test and the reads of its jobs table: the application's only
 * engine, or one shard's.
 */
record EngineRows(QueueEngine engine, JobRows rows) {

	static EngineRows of(QueueEngine engine) {
		return new EngineRows(engine, new JobRows(engine.jobs().jdbcTemplate(), engine.settings().schema()));
	}

}
