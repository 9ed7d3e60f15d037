package dev.pgqueue.engine.service;

import java.sql.SQLException;
import java.time.Duration;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.BadSqlGrammarException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Tests for {@link PeriodicService}'s handling of a failing run. */
class PeriodicServiceTests {

	@Test
	void aFailingRunIsLoggedWithTheDatabasesOwnWordsAndTheServiceRunsAgain() {
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(PeriodicService.class);
		logger.addAppender(logs);
		PeriodicService refused = new PeriodicService("refused test", Duration.ofMillis(50)) {
			@Override
			protected void runOnce() {
				throw new BadSqlGrammarException("flush", "INSERT INTO pgqueue_queue_history VALUES (1)",
						new SQLException("ERROR: permission denied for table pgqueue_queue_history", "42501"));
			}
		};
		try {
			refused.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> logs.list.size() >= 2);
		}
		finally {
			refused.stop();
			logger.detachAppender(logs);
		}
		assertThat(logs.list.get(0).getFormattedMessage()).startsWith("pgqueue refused test failed; it runs again in")
			.contains("bad SQL grammar")
			.contains("permission denied for table pgqueue_queue_history");
	}

}
