package dev.pgqueue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.listener.JobListenerMethodAdapter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Bad input gets a clear error naming the job, nothing is lost, and the poller keeps running.
 */
class BadInputTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final String SECRET = "4111-1111-1111-1111";

	private static QueueFixture fixture;

	private static JobPoller poller;

	private static QueueFixture.Maintenance promoter;

	private static final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private static final Map<String, Object> received = new ConcurrentHashMap<>();

	record Payment(String account, int amountCents) {
	}

	static class PaymentListener {

		@JobListener(kind = "payment.capture", queue = "bad")
		void capture(Payment payment, Job job) {
			received.put(job.id().toString(), payment);
		}

		@JobListener(kind = "payment.optional", queue = "bad")
		void maybe(Optional<Payment> payment, Job job) {
			received.put(job.id().toString(), payment);
		}

	}

	@BeforeAll
	static void setUp() throws Exception {
		fixture = QueueFixture.create("bad_input");
		fixture.configure(QueueSettings.defaults("bad")
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(2)
			.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(10), 1.0, 0.0)));
		PaymentListener listener = new PaymentListener();
		for (String name : List.of("capture", "maybe")) {
			Method method = PaymentListener.class.getDeclaredMethod(name,
					name.equals("capture") ? Payment.class : Optional.class, Job.class);
			fixture.handlers()
				.register(new JobListenerMethodAdapter(listener, method, method.getAnnotation(JobListener.class),
						fixture.jsonMapper()));
		}
		fixture.handle("overflow", "bad", (job) -> recurse(0));
		fixture.handle("assertion", "bad", (job) -> {
			throw new AssertionError("invariant broken");
		});
		fixture.handle("linkage", "bad", (job) -> {
			throw new NoClassDefFoundError("com/example/Missing");
		});
		fixture.handle("fine", "bad", (job) -> received.put(job.id().toString(), "fine"));
		Logger root = (Logger) LoggerFactory.getLogger("dev.pgqueue");
		logs.start();
		root.addAppender(logs);
		poller = fixture.poller("bad");
		poller.start();
		// Retries wait as scheduled jobs; the promoter makes them due again.
		promoter = fixture.maintenance((m) -> new MaintenanceSettings(Duration.ofMillis(50), m.rescueInterval(),
				m.cleanupInterval(), m.statsInterval(), m.completedRetention(), m.failedRetention(),
				m.cleanupBatchSize(), m.deadRowsWarning()));
		promoter.start();
	}

	@AfterAll
	static void tearDown() {
		promoter.stop();
		((Logger) LoggerFactory.getLogger("dev.pgqueue")).detachAppender(logs);
		fixture.close();
	}

	private static int recurse(int depth) {
		return recurse(depth + 1) + 1;
	}

	@Test
	void unmappablePayloadFailsAtOnceWithoutItsValuesInTheErrorOrTheLogs() {
		UUID id = fixture.client().enqueue("payment.capture", Map.of("account", "acme", "amountCents", SECRET));
		await().atMost(WAIT).until(() -> "failed".equals(fixture.row(id).get("state")));
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("attempt", 1);
		assertThat((String) row.get("last_error")).contains(id.toString(), "payment.capture", "queue 'bad'",
				Payment.class.getName(), "amountCents").doesNotContain(SECRET);
		assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).noneMatch((m) -> m.contains(SECRET));
		assertThat(logs.list).filteredOn((event) -> event.getThrowableProxy() != null)
			.extracting((event) -> event.getThrowableProxy().getMessage())
			.noneMatch((message) -> message != null && message.contains(SECRET));
		assertPollerStillRuns();
	}

	@Test
	void nullPayloadFailsAtOnceForAListenerThatNeedsOneAndIsEmptyForAnOptional() {
		UUID needsOne = fixture.client().enqueue("payment.capture", null);
		UUID optional = fixture.client().enqueue("payment.optional", null);
		await().atMost(WAIT).until(() -> "failed".equals(fixture.row(needsOne).get("state")));
		assertThat(fixture.row(needsOne)).containsEntry("attempt", 1);
		assertThat((String) fixture.row(needsOne).get("last_error")).contains(needsOne.toString(), "is null",
				"payment.capture");
		await().atMost(WAIT).until(() -> received.containsKey(optional.toString()));
		assertThat(received.get(optional.toString())).isEqualTo(Optional.empty());
		assertPollerStillRuns();
	}

	@Test
	void oversizedPayloadIsRefusedAtEnqueueNamingTheKindAndTheLimit() {
		JobClient small = fixture.engineBuilder()
			.settings(fixture.engineSettings().withMaxPayloadBytes(1024))
			.processing(false)
			.build()
			.client();
		long before = fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> small.enqueue("payment.capture", new Payment("x".repeat(2000), 1)))
			.withMessageContaining("'payment.capture'")
			.withMessageContaining("over the limit of 1024 bytes")
			.withMessageContaining("pgqueue.max-payload-size");
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class))
			.isEqualTo(before);
		assertThat(small.enqueue("payment.capture", new Payment("acme", 1))).isNotNull();
	}

	@Test
	void anEnqueueAllLargerThanTheLimitIsRefusedWholeNamingTheSetting() {
		JobClient small = fixture.engineBuilder()
			.settings(fixture.engineSettings().withMaxJobsPerEnqueue(5))
			.processing(false)
			.build()
			.client();
		long before = fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
		List<JobRequest> six = IntStream.range(0, 6)
			.mapToObj((i) -> JobRequest.of("payment.capture", new Payment("acme", i)))
			.toList();
		assertThatIllegalArgumentException().isThrownBy(() -> small.enqueueAll(six))
			.withMessageContaining("6 jobs")
			.withMessageContaining("'payment.capture'")
			.withMessageContaining("pgqueue.max-jobs-per-enqueue (5)");
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class))
			.as("jobs of the refused call").isEqualTo(before);
		assertThat(small.enqueueAll(six.subList(0, 5))).hasSize(5);
		assertThat(fixture.engineSettings().maxJobsPerEnqueue()).as("the default").isEqualTo(10_000);
	}

	@Test
	void anEnqueueAllOfUniqueAndOtherJobsIsAllOrNothingOutsideATransaction() {
		// The unique job's own statement fails after the others' insert, as a server's error would make it.
		String schema = fixture.schema().name();
		fixture.jdbc().execute("CREATE FUNCTION " + schema + ".refuse_boom() RETURNS trigger LANGUAGE plpgsql AS "
				+ "$$ BEGIN IF NEW.kind = 'unique.boom' THEN RAISE EXCEPTION 'refused by the test'; END IF; "
				+ "RETURN NEW; END $$");
		fixture.jdbc().execute("CREATE TRIGGER refuse_boom BEFORE INSERT ON " + fixture.table()
				+ " FOR EACH ROW EXECUTE FUNCTION " + schema + ".refuse_boom()");
		try {
			long before = fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
			assertThatThrownBy(() -> fixture.client().enqueueAll(List.of(JobRequest.of("payment.capture",
					new Payment("acme", 1)), JobRequest.of("unique.boom", null).uniqueKey("boom-1"))))
				.rootCause().hasMessageStartingWith("ERROR: refused by the test");
			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class))
				.as("jobs of the failed call, which the caller has no id of").isEqualTo(before);
		}
		finally {
			fixture.jdbc().execute("DROP TRIGGER refuse_boom ON " + fixture.table());
			fixture.jdbc().execute("DROP FUNCTION " + schema + ".refuse_boom()");
		}
	}

	@Test
	void halfASurrogatePairAndTimesPastWhatIsStoredAreRefusedAtEnqueue() {
		String lone = String.valueOf((char) 0xD800);
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("payment" + lone, null))
			.withMessageContaining("half of a surrogate pair");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).concurrencyKey("k" + (char) 0xDC00))
			.withMessageContaining("half of a surrogate pair");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> fixture.client().enqueue("payment.capture", new Payment("acme" + lone, 1)))
			.withMessageContaining("'payment.capture'")
			.withMessageContaining("half of a surrogate pair");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).runAt(Instant.parse("+300000-01-01T00:00:00Z")))
			.withMessageContaining("outside the years 1 to 9999");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).delay(Duration.ofDays(400_000)))
			.withMessageContaining("longer than the hundred years");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).uniqueKey("k", Duration.ofHours(1_000_000_000_000_000L)))
			.withMessageContaining("longer than the hundred years");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobQuery.all().finishedSince(Instant.parse("-5000-01-01T00:00:00Z")))
			.withMessageContaining("outside the years 1 to 9999");
		assertThatIllegalArgumentException().isThrownBy(() -> fixture.admin().pause("mail" + lone))
			.withMessageContaining("half of a surrogate pair");
		assertThatIllegalArgumentException().isThrownBy(() -> fixture.admin().finishedWithin(Duration.ofSeconds(Long.MAX_VALUE)))
			.withMessageContaining("days");
		// A pair whole is a character like any other.
		assertThat(fixture.client().enqueue("payment.capture", new Payment("acme " + new String(Character.toChars(0x1F600)), 1)))
			.isNotNull();
	}

	@Test
	void aNulCharacterIsRefusedAtEnqueueAndTheCallersTransactionGoesOn() {
		String nul = String.valueOf((char) 0);
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("payment" + nul + "capture", null))
			.withMessageContaining("kind")
			.withMessageContaining("U+0000");
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("payment.capture", null).queue("b" + nul))
			.withMessageContaining("queue");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).tags("eu" + nul))
			.withMessageContaining("tag");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("payment.capture", null).concurrencyKey("k" + nul))
			.withMessageContaining("concurrency key");

		// In the caller's transaction: the refusal comes before any statement, so the transaction goes on.
		long before = fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
		UUID kept = new TransactionTemplate(new DataSourceTransactionManager(fixture.dataSource())).execute((status) -> {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> fixture.client().enqueue("payment.capture", new Payment("ac" + nul + "me", 1)))
				.withMessageContaining("'payment.capture'")
				.withMessageContaining("U+0000");
			return fixture.client().enqueue("payment.capture", new Payment("acme", 2));
		});
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class))
			.isEqualTo(before + 1);
		assertThat(fixture.admin().find(kept)).isPresent();
		// The text backslash-u-0000 is no NUL: it is stored as it is.
		UUID text = fixture.client().enqueue("payment.capture", new Payment("C:\\u0000", 3));
		await().atMost(WAIT).until(() -> received.containsKey(text.toString()));
		assertThat(received.get(text.toString())).isEqualTo(new Payment("C:\\u0000", 3));
	}

	@Test
	void handlersThrowingErrorsOfEveryKindAreRetriedThenFailedWhileThePollerKeepsRunning() {
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("overflow", 1), JobRequest.of("assertion", 2),
					JobRequest.of("linkage", 3)));
		for (UUID id : ids) {
			await().atMost(WAIT).until(() -> "failed".equals(fixture.row(id).get("state")));
			assertThat(fixture.row(id)).containsEntry("attempt", 2);
		}
		assertThat((String) fixture.row(ids.get(0)).get("last_error")).contains("StackOverflowError");
		assertThat((String) fixture.row(ids.get(1)).get("last_error")).contains("AssertionError", "invariant broken");
		assertThat((String) fixture.row(ids.get(2)).get("last_error")).contains("NoClassDefFoundError");
		assertThat(poller.isRunning()).isTrue();
		assertPollerStillRuns();
	}

	@Test
	void dueJobsOfAKindNoListenerHereHandlesAreLeftAloneAndReported() {
		UUID orphan = fixture.client()
			.enqueue(JobRequest.of("payment.refund", Map.of("account", "acme")).queue("bad")
				.runAt(java.time.Instant.now().minus(Duration.ofMinutes(5))));
		assertPollerStillRuns();
		assertThat(fixture.row(orphan)).containsEntry("state", "available").containsEntry("attempt", 0);
		QueueFixture.Maintenance maintenance = fixture.maintenance((settings) -> settings);
		maintenance.readStats();
		assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage)
			.anyMatch((message) -> message.contains("kind 'payment.refund'") && message.contains("queue 'bad'")
					&& message.contains("no @JobListener"));
	}

	private static void assertPollerStillRuns() {
		UUID id = fixture.client().enqueue("fine", "still here");
		await().atMost(WAIT).until(() -> received.containsKey(id.toString()));
		assertThat(fixture.row(id)).containsEntry("state", "completed");
	}

}
