package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.settings.ScheduleSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A schedule's jobs, a tick's and one run now, are born as an enqueue's are: with the engine's ids (on
 * shards, ids that tell the first shard, where the schedules live), the enqueue's checks and its events.
 */
class ScheduledJobBirthTests {

	private final List<QueueFixture> fixtures = new ArrayList<>();

	@AfterEach
	void close() {
		this.fixtures.forEach(QueueFixture::close);
	}

	@Test
	void onShardsATicksJobAndOneRunNowTellTheFirstShardAndAreFoundByAskingItAlone() {
		Map<String, QueueFixture> shards = new LinkedHashMap<>();
		Map<String, CountingDataSource> pools = new LinkedHashMap<>();
		for (String name : List.of("s1", "s2", "s3")) {
			QueueFixture fixture = fixture("birth_" + name);
			shards.put(name, fixture);
			pools.put(name, new CountingDataSource(fixture.dataSource()));
		}
		QueueEngine engine = QueueFixture.shardsBuilder(shards, pools::get).processing(false).build();
		JobSchedules schedules = engine.schedules();
		schedules.save(Schedule.of("hourly", "0 0 * * * *", "report.build").payload(Map.of("n", 1)));
		shards.get("s1").jdbc().update("UPDATE " + shards.get("s1").schema().name()
				+ ".pgqueue_schedules SET next_tick = now() - interval '10 seconds' WHERE name = 'hourly'");
		ScheduleTicker ticker = EngineInternals.of(engine, "s1").scheduleTicker();

		assertThat(ticker.pass().fired()).isEqualTo(1);
		UUID ticked = schedules.get("hourly").orElseThrow().lastJob();
		UUID ranNow = schedules.runNow("hourly");

		for (UUID id : List.of(ticked, ranNow)) {
			assertThat(engine.shards().shardOf(id)).as("the shard job %s's id tells", id).contains("s1");
			pools.values().forEach(CountingDataSource::reset);
			assertThat(engine.admin().find(id)).map(JobDetails::kind).contains("report.build");
			assertThat(pools.get("s2").connections.get() + pools.get("s3").connections.get())
				.as("connections to the shards that do not hold job %s", id).isZero();
		}
	}

	@Test
	void aTicksJobAndOneRunNowArePublishedAsEnqueuedOnceTheirTransactionCommits() {
		QueueFixture fixture = fixture("birth_events");
		List<JobEvent> events = new CopyOnWriteArrayList<>();
		fixture.events(events::add);
		QueueEngine engine = fixture.engineBuilder().processing(false).build();
		JobSchedules schedules = engine.schedules();
		schedules.save(Schedule.of("hourly", "0 0 * * * *", "report.build").queue("reports"));
		dueNow(fixture, "hourly");

		assertThat(EngineInternals.of(engine).scheduleTicker().pass().fired()).isEqualTo(1);
		UUID ticked = schedules.get("hourly").orElseThrow().lastJob();
		UUID ranNow = schedules.runNow("hourly");

		assertThat(events).containsExactly(new JobEvent.Enqueued(ticked, "report.build", "reports"),
				new JobEvent.Enqueued(ranNow, "report.build", "reports"));
	}

	@Test
	void aSchedulesPayloadOverTheLimitIsRefusedNamingTheScheduleWhileTheOthersFire() {
		QueueFixture fixture = fixture("birth_limit");
		// Saved under the default limit; the limit is lowered afterwards, as a redeploy with a new setting would.
		JobSchedules saving = fixture.engineBuilder().processing(false).build().schedules();
		saving.save(Schedule.of("large", "0 0 * * * *", "report.build").payload(Map.of("text", "x".repeat(200))));
		saving.save(Schedule.of("small", "0 0 * * * *", "report.build").payload(Map.of("n", 1)));
		dueNow(fixture, "large");
		dueNow(fixture, "small");
		QueueEngine limited = fixture.engineBuilder()
			.settings(fixture.engineSettings().withMaxPayloadBytes(100))
			.schedules(ScheduleSettings.DEFAULT)
			.processing(false)
			.build();
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(ScheduleTicker.class);
		logger.addAppender(logs);
		try {
			assertThat(EngineInternals.of(limited).scheduleTicker().pass().fired()).as("the small schedule's tick")
				.isEqualTo(1);
		}
		finally {
			logger.detachAppender(logs);
		}

		assertThat(logs.list.stream().filter((event) -> event.getLevel() == Level.WARN)
			.map(ILoggingEvent::getFormattedMessage)).anySatisfy((line) -> assertThat(line).contains("Schedule 'large' is not fired")
			.contains("over the limit of 100 bytes")
			.contains("pgqueue.max-payload-size"));
		assertThat(limited.schedules().get("small").orElseThrow().lastJob()).isNotNull();
		assertThat(limited.schedules().get("large").orElseThrow().lastJob()).as("not fired, not moved on").isNull();
		assertThat(limited.schedules().get("large").orElseThrow().nextTick()).isBefore(Instant.now());
	}

	@Test
	void aScheduleWhoseJobsCouldNeverBeBornIsRefusedAtSaveNamingIt() {
		QueueFixture fixture = fixture("birth_save");
		JobSchedules schedules = fixture.engineBuilder()
			.settings(fixture.engineSettings().withMaxPayloadBytes(100))
			.processing(false)
			.build()
			.schedules();

		assertThatIllegalArgumentException()
			.isThrownBy(() -> schedules.save(Schedule.of("large", "0 0 * * * *", "report.build")
				.payload(Map.of("text", "x".repeat(200)))))
			.withMessageContaining("schedule 'large'")
			.withMessageContaining("over the limit of 100 bytes");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> schedules.save(Schedule.of("long-kind", "0 0 * * * *", "k".repeat(201))))
			.withMessageContaining("Schedule 'long-kind'")
			.withMessageContaining("longer than 200 characters");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> schedules.save(Schedule.of("long-queue", "0 0 * * * *", "report.build")
				.queue("q".repeat(201))))
			.withMessageContaining("Schedule 'long-queue'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> schedules.save(Schedule.of("nul", "0 0 * * * *", "report.build")
				.payload(Map.of("text", "a" + (char) 0))))
			.withMessageContaining("U+0000");
		assertThat(schedules.list()).isEmpty();
	}

	private QueueFixture fixture(String prefix) {
		QueueFixture fixture = QueueFixture.create(prefix);
		fixture.handle("report.build", "reports", (job) -> {
		});
		this.fixtures.add(fixture);
		return fixture;
	}

	private static void dueNow(QueueFixture fixture, String schedule) {
		fixture.jdbc().update("UPDATE " + fixture.schema().name() + ".pgqueue_schedules SET next_tick = "
				+ "now() - interval '10 seconds' WHERE name = ?", schedule);
	}

	/** A shard's pool that counts the connections taken from it. */
	private static final class CountingDataSource extends DelegatingDataSource {

		final AtomicInteger connections = new AtomicInteger();

		CountingDataSource(javax.sql.DataSource target) {
			super(target);
		}

		void reset() {
			this.connections.set(0);
		}

		@Override
		public Connection getConnection() throws SQLException {
			this.connections.incrementAndGet();
			return super.getConnection();
		}

	}

}
