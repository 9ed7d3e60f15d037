package dev.pgqueue.sample.database;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Tells what to do when no database could be found, instead of a stack trace.
 */
class NoDatabaseFailureAnalyzer extends AbstractFailureAnalyzer<NoDatabaseException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, NoDatabaseException cause) {
		return new FailureAnalysis(cause.getMessage(), """
				Do one of these:
				  - point the sample at a server: export SPRING_DATASOURCE_URL='jdbc:postgresql://host:5432/db' \
				(and SPRING_DATASOURCE_USERNAME, SPRING_DATASOURCE_PASSWORD);
				  - start a PostgreSQL on localhost:5432 that lets user postgres in without a password;
				  - run the sample as a non-root user, so that it can start an embedded PostgreSQL;
				  - with Docker, run TestSampleApplication (src/test/java) to use a PostgreSQL container.""",
				null);
	}

}
