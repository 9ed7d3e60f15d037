package dev.pgqueue.engine.service;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.BadSqlGrammarException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Tests for {@link PeriodicService}'s handling of a failing run, and of a run asked for. */
class PeriodicServiceTests {

	@Test
	void aFailingRunIsLoggedWithTheDatabasesOwnWordsAndTheServiceRunsAgain() {
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(ServiceHealth.class);
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
		assertThat(refused.health().failures()).isGreaterThanOrEqualTo(2);
	}

	@Test
	void aRunThatThrowsAnErrorIsCountedAndTheNextRunsStillCome() {
		AtomicInteger runs = new AtomicInteger();
		PeriodicService erring = new PeriodicService("erring test", Duration.ofMillis(20)) {
			@Override
			protected void runOnce() {
				// A scheduled task that throws ends every later run of it, silently, unless caught.
				if (runs.incrementAndGet() <= 2) {
					throw new StackOverflowError("injected");
				}
			}
		};
		try {
			erring.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 5);
		}
		finally {
			erring.stop();
		}
		assertThat(erring.health().failures()).isEqualTo(2);
		assertThat(erring.health().stoppedBy()).isNull();
	}

	@Test
	void runSoonRunsTheTaskAtOnceBesidesItsSchedule() {
		AtomicInteger runs = new AtomicInteger();
		PeriodicService slow = new PeriodicService("slow test", Duration.ofHours(1)) {
			@Override
			protected void runOnce() {
				runs.incrementAndGet();
			}
		};
		try {
			slow.start();
			await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
			slow.runSoon();
			await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
		}
		finally {
			slow.stop();
		}
		slow.runSoon();
		assertThat(runs.get()).as("a stopped service does not run").isEqualTo(2);
	}

}
