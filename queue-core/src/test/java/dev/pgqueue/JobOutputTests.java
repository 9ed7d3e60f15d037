package dev.pgqueue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.listener.JobListenerMethodAdapter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a {@code @JobListener} method returns is stored with its completed job, written by the
 * application's mapper, and read back by id; void listeners store nothing; an output over
 * {@code pgqueue.max-output-size} fails the job, saying so. Both modes, through real pollers.
 */
class JobOutputTests {

	/** Small enough for a test to pass it: 200 bytes of JSON. */
	private static final long MAX_OUTPUT = 200;

	private static QueueFixture fixture;

	record Invoice(String number, long cents) {
	}

	record Totals(String account, long cents, List<String> invoices) {
	}

	static class Listeners {

		@JobListener(kind = "totals.sum", queue = "unused")
		Totals sum(Invoice invoice, Job job) {
			return new Totals("acct-" + invoice.number(), invoice.cents() * 2, List.of(invoice.number()));
		}

		@JobListener(kind = "totals.nothing", queue = "unused")
		void nothing(Invoice invoice) {
		}

		@JobListener(kind = "totals.null", queue = "unused")
		Totals nullTotals(Invoice invoice) {
			return null;
		}

		@JobListener(kind = "totals.huge", queue = "unused")
		String huge(Invoice invoice, Job job) {
			fixture.jdbc().update("INSERT INTO output_writes VALUES (?)", job.id());
			return "x".repeat(500);
		}

	}

	@BeforeAll
	static void setUp() throws Exception {
		fixture = QueueFixture.create("output");
		fixture.jdbc().execute("CREATE TABLE output_writes (job_id uuid)");
		fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(10), false, false,
				WorkerSettings.DEFAULT_ATTEMPT_HISTORY, WorkerSettings.DEFAULT_MAX_SNOOZES, MAX_OUTPUT));
		Listeners listeners = new Listeners();
		for (QueueMode mode : QueueMode.values()) {
			fixture.configure(QueueSettings.defaults(queue(mode)).withMode(mode).withPollInterval(Duration.ofMillis(50)));
			for (Method method : Listeners.class.getDeclaredMethods()) {
				JobListener annotation = method.getAnnotation(JobListener.class);
				if (annotation == null) {
					continue;
				}
				fixture.handlers()
					.register(new JobListenerMethodAdapter(listeners, method,
							listener(annotation.kind() + "." + mode, queue(mode)), fixture.jsonMapper()));
			}
		}
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static String queue(QueueMode mode) {
		return (mode == QueueMode.TRANSACTIONAL) ? "output_tx" : "output_leased";
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aListenersReturnValueIsStoredWithItsCompletedJob(QueueMode mode) {
		UUID id = run(mode, "totals.sum." + mode);

		assertThat(fixture.admin().find(id).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
		String output = fixture.admin().output(id).orElseThrow();
		Totals totals = fixture.jsonMapper().readValue(output, Totals.class);
		assertThat(totals).isEqualTo(new Totals("acct-INV-7", 2468, List.of("INV-7")));
		assertThat(fixture.admin().output(UUID.randomUUID())).as("no such job").isEmpty();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void voidListenersAndNullReturnsStoreNothing(QueueMode mode) {
		UUID none = run(mode, "totals.nothing." + mode);
		UUID nullOne = run(mode, "totals.null." + mode);

		for (UUID id : List.of(none, nullOne)) {
			assertThat(fixture.admin().find(id).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
			assertThat(fixture.admin().output(id)).isEmpty();
			assertThat(fixture.row(id).get("output")).isNull();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void anOutputOverTheLimitFailsTheJobNamingItsSizeAndTheSetting(QueueMode mode) {
		UUID id = run(mode, "totals.huge." + mode);

		JobDetails job = fixture.admin().find(id).orElseThrow();
		assertThat(job.state()).as("retrying would return as much again").isEqualTo(JobState.FAILED);
		assertThat(job.attempt()).isEqualTo(1);
		assertThat(job.lastError()).contains(id.toString(), "totals.huge." + mode, "502 bytes",
				"pgqueue.max-output-size", Long.toString(MAX_OUTPUT));
		assertThat(fixture.admin().output(id)).isEmpty();
		long writes = fixture.jdbc().queryForObject("SELECT count(*) FROM output_writes WHERE job_id = ?", Long.class, id);
		assertThat(writes).as("its database work: undone in a transactional queue, done in a leased one")
			.isEqualTo((mode == QueueMode.TRANSACTIONAL) ? 0 : 1);
	}

	private static UUID run(QueueMode mode, String kind) {
		UUID id = fixture.client().enqueue(JobRequest.of(kind, new Invoice("INV-7", 1234)).maxAttempts(3));
		JobPoller poller = fixture.poller(queue(mode));
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30))
				.until(() -> fixture.admin().find(id).map((job) -> job.state().isFinished()).orElse(false));
		}
		finally {
			poller.stop();
		}
		return id;
	}

	/** The annotation of a listener of {@code kind} in {@code queue}. */
	private static JobListener listener(String kind, String queue) {
		return new JobListener() {

			@Override
			public Class<JobListener> annotationType() {
				return JobListener.class;
			}

			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public int maxRunning() {
				return 0;
			}

			@Override
			public String timeout() {
				return "";
			}

			@Override
			public String rateLimit() {
				return "";
			}

			@Override
			public int rateWeight() {
				return 1;
			}

		};
	}

}
