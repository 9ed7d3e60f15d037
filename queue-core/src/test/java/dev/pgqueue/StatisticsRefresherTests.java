package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.maintenance.StatisticsRefresher;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link StatisticsRefresher} against a real PostgreSQL: what it does and says while another
 * session (an autovacuum, say) holds the lock its {@code ANALYZE (SKIP_LOCKED)} steps over.
 */
class StatisticsRefresherTests {

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("statistics_refresher");
		fixture.configure(QueueSettings.defaults("refresh"));
		fixture.jdbc().execute("ALTER TABLE " + fixture.table() + " SET (autovacuum_enabled = false)");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void saysItAnalyzedOnlyWhenItDidNotWhileAVacuumHoldsTheTable() throws Exception {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 5_000; i++) {
			requests.add(JobRequest.of("refresh.job", i).queue("refresh"));
		}
		fixture.client().enqueueAll(requests);
		StatisticsRefresher refresher = new StatisticsRefresher(fixture.maintenanceRepository());
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(StatisticsRefresher.class);
		logger.addAppender(logs);
		try {
			try (Connection vacuum = fixture.dataSource().getConnection(); Statement statement = vacuum.createStatement()) {
				vacuum.setAutoCommit(false);
				// The lock a VACUUM (or another ANALYZE) holds while it works on the table.
				statement.execute("LOCK TABLE " + fixture.table() + " IN SHARE UPDATE EXCLUSIVE MODE");
				assertThat(refresher.refreshIfStale()).as("analyzed while the table was held").isFalse();
				assertThat(infos(logs)).as("what it said while the table was held").isEmpty();
				vacuum.rollback();
			}
			assertThat(refresher.refreshIfStale()).as("analyzed once the table was free").isTrue();
			assertThat(infos(logs)).singleElement().satisfies((message) -> assertThat(message)
				.startsWith("Analyzed the jobs table: the planner estimated 0 rows"));
			assertThat(refresher.refreshIfStale()).as("analyzed again, with fresh statistics").isFalse();
		}
		finally {
			logger.detachAppender(logs);
		}
	}

	private static List<String> infos(ListAppender<ILoggingEvent> logs) {
		return logs.list.stream()
			.filter((event) -> event.getLevel() == ch.qos.logback.classic.Level.INFO)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

}
