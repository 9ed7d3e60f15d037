package dev.pgqueue.sample;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import com.sun.net.httpserver.HttpServer;
import dev.pgqueue.Job;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.Schedule;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeOptions;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * The sample's dashboard in a real, headless Chromium, with the sample's own dashboard settings
 * (writes allowed without security), on a real PostgreSQL. The browser and its driver are the
 * system's (Debian's {@code chromium} and {@code chromium-driver}), named by path so that Selenium
 * never looks for or downloads one; {@code -Dpgqueue.test.chromium} and
 * {@code -Dpgqueue.test.chromedriver} name others. The sample's signup digest, which enqueues into
 * {@code mail} every minute, ticks once a year here: a paused {@code mail} queue holds only the
 * tests' jobs.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.database=provided", "pgqueue.dashboard.refresh-interval=1s",
				"pgqueue.schedules.signup-digest.cron=0 0 0 1 1 *" })
@Import(DashboardBrowserTests.DashboardListeners.class)
@Tag("machine") // needs a program of the machine: run with -Pmachine (see the parent pom)
class DashboardBrowserTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static final String SCHEDULE = "dashboard-nightly";

	private static final TestSchema schema = TestDatabase.get().createSchema("sample_dashboard");

	private static WebDriver browser;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestDatabase database = schema.database();
		registry.add("spring.datasource.url", database::jdbcUrl);
		if (database.username() != null) {
			registry.add("spring.datasource.username", database::username);
		}
		if (database.password() != null) {
			registry.add("spring.datasource.password", database::password);
		}
		registry.add("spring.datasource.hikari.schema", schema::name);
		registry.add("spring.flyway.schemas", schema::name);
		registry.add("pgqueue.schema.name", schema::name);
	}

	@BeforeAll
	static void startBrowser() {
		Path chromium = Path.of(System.getProperty("pgqueue.test.chromium", "/usr/bin/chromium"));
		Path driver = Path.of(System.getProperty("pgqueue.test.chromedriver", "/usr/bin/chromedriver"));
		if (!Files.isExecutable(chromium) || !Files.isExecutable(driver)) {
			fail("The dashboard's browser test needs Chromium at " + chromium + " and its WebDriver at " + driver
					+ ", and found " + (Files.isExecutable(chromium) ? "only the browser"
							: Files.isExecutable(driver) ? "only the driver" : "neither")
					+ ". On Debian or Ubuntu: apt-get install chromium chromium-driver (.ci/run does this); "
					+ "elsewhere, name them with -Dpgqueue.test.chromium=... -Dpgqueue.test.chromedriver=...");
		}
		// With the driver named, Selenium Manager is never asked to find or download one.
		System.setProperty("webdriver.chrome.driver", driver.toString());
		ChromeOptions options = new ChromeOptions();
		options.setBinary(chromium.toString());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000");
		browser = new ChromeDriver(options);
	}

	@AfterAll
	static void stopBrowser() {
		if (browser != null) {
			browser.quit();
		}
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JobAdmin admin;

	@Autowired
	private JobSchedules schedules;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private DashboardListeners listeners;

	@AfterEach
	void resumeTheQueue() {
		this.admin.resume("mail");
	}

	@AfterEach
	void deleteTheSchedule() {
		this.schedules.delete(SCHEDULE);
	}

	@Test
	void retriesAFailedJobWithItsButton() {
		UUID id = this.jobs.enqueue(JobRequest.of("dashboard.fails-once", "hello").queue("mail").maxAttempts(1));
		await().atMost(TIMEOUT).until(() -> "failed".equals(stateOf(id)));

		browser.get(dashboard() + "?state=failed");
		String row = "tr[data-job='" + id + "']";
		assertThat(text(row + " .state")).isEqualTo("failed");
		assertThat(text(row + " td.error")).contains("fails the first time");

		click(row + " button.retry");
		await().atMost(TIMEOUT).until(() -> browser.getCurrentUrl().contains("/pgqueue/jobs/" + id));
		assertThat(text(".notice")).startsWith("Retried");
		await().atMost(TIMEOUT).until(() -> "completed".equals(stateOf(id)));
		// Shown by the page the browser was sent to, or by its reload when the job ran after it loaded.
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text("#job .state").equals("completed"));
	}

	@Test
	void cancelsARunningJobWithItsButton() {
		UUID id = this.jobs.enqueue(JobRequest.of("dashboard.runs-until-cancelled", "long").queue("mail"));
		// The mail queue is transactional: the job's row shows it available until its batch commits.
		await().atMost(TIMEOUT).until(() -> this.listeners.started.contains(id));

		browser.get(dashboard() + "/jobs/" + id);
		click("#job button.cancel");
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text(".notice").startsWith("Cancel requested"));
		await().atMost(TIMEOUT).until(() -> "cancelled".equals(stateOf(id)));
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text("#job .state").equals("cancelled"));
		assertThat(browser.findElements(By.cssSelector("#job button.cancel"))).isEmpty();
	}

	@Test
	void retriesEveryFailedJobOfASearchAfterConfirmingHowMany() {
		java.util.List<UUID> ids = new java.util.ArrayList<>();
		for (int i = 0; i < 3; i++) {
			ids.add(this.jobs.enqueue(JobRequest.of("dashboard.fails-once", "bulk " + i)
				.queue("mail")
				.maxAttempts(1)
				.tags("browser-bulk")));
		}
		UUID other = this.jobs.enqueue(JobRequest.of("dashboard.fails-once", "other").queue("mail").maxAttempts(1));
		await().atMost(TIMEOUT).until(() -> ids.stream().allMatch((id) -> "failed".equals(stateOf(id)))
				&& "failed".equals(stateOf(other)));

		browser.get(dashboard() + "?state=failed&tag=browser-bulk");
		assertThat(browser.findElements(By.cssSelector("tr[data-job]"))).hasSize(3);
		click("a.bulk-retry");
		await().atMost(TIMEOUT).until(() -> browser.getCurrentUrl().contains("/pgqueue/jobs/bulk"));
		assertThat(text("#matching")).isEqualTo("3");
		assertThat(text(".confirm")).contains("tag 'browser-bulk'", "state failed");
		click("button.confirm-retry");
		awaitNotice("Retried 3 jobs: available to run again.");
		await().atMost(TIMEOUT).until(() -> ids.stream().allMatch((id) -> "completed".equals(stateOf(id))));
		assertThat(stateOf(other)).isEqualTo("failed");
	}

	@Test
	void pausesAQueueUntilItIsResumed() {
		browser.get(dashboard());
		String mail = "tr[data-queue='mail']";
		assertThat(text(mail + " td.status")).isEqualTo("active");

		click(mail + " button.pause");
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text(mail + " td.status").equals("paused"));
		assertThat(this.admin.pausedQueues()).containsExactly("mail");
		assertThat(text(mail + " td.depth")).isEqualTo("0");
		UUID id = this.jobs.enqueue(JobRequest.of("dashboard.works", "while paused").queue("mail"));
		// The page reloads itself: no one touches it until it shows the job waiting.
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text(mail + " td.depth").equals("1"));
		// Twice the poll interval and then some: a running poller would have claimed it.
		await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5)).until(() -> "available".equals(stateOf(id)));

		click(mail + " button.resume");
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text(mail + " td.status").equals("active"));
		await().atMost(TIMEOUT).until(() -> "completed".equals(stateOf(id)));
	}

	@Test
	void aFormOnAnotherSitePausesNothing() throws Exception {
		// A page of another origin (and site) that posts a form to the dashboard as soon as it loads: no
		// script reaches the dashboard, the browser sends the form with whatever the user has.
		HttpServer evil = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		String attack = "<!doctype html><html><body><form method=\"post\" action=\"" + dashboard()
				+ "/queues/mail/pause\"></form><script>document.forms[0].submit()</script></body></html>";
		evil.createContext("/", (exchange) -> {
			byte[] body = attack.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
			exchange.sendResponseHeaders(200, body.length);
			try (var out = exchange.getResponseBody()) {
				out.write(body);
			}
		});
		evil.start();
		try {
			browser.get("http://127.0.0.1:" + evil.getAddress().getPort() + "/");
			await().atMost(TIMEOUT).until(() -> browser.getCurrentUrl().endsWith("/pgqueue/queues/mail/pause"));
			assertThat(browser.getPageSource()).contains("403");
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
				.until(() -> !this.admin.pausedQueues().contains("mail"));
		}
		finally {
			evil.stop(0);
		}
		// The dashboard's own button still pauses it.
		browser.get(dashboard());
		click("tr[data-queue='mail'] button.pause");
		await().atMost(TIMEOUT).until(() -> this.admin.pausedQueues().contains("mail"));
	}

	@Test
	void pausesResumesRunsAndDeletesAScheduleWithItsButtons() {
		this.schedules.save(Schedule.of(SCHEDULE, "0 0 2 * * *", "dashboard.works").queue("mail"));
		browser.get(dashboard());
		String row = "tr[data-schedule='" + SCHEDULE + "']";
		assertThat(text(row + " td.status")).isEqualTo("running");

		click(row + " button.pause");
		awaitNotice("Schedule " + SCHEDULE + " paused");
		assertThat(text(row + " td.status")).startsWith("paused");
		assertThat(this.schedules.get(SCHEDULE).orElseThrow().paused()).isTrue();

		click(row + " button.resume");
		awaitNotice("Schedule " + SCHEDULE + " resumed");
		assertThat(text(row + " td.status")).isEqualTo("running");
		assertThat(this.schedules.get(SCHEDULE).orElseThrow().paused()).isFalse();

		click(row + " button.run-now");
		await().atMost(TIMEOUT).until(() -> this.schedules.get(SCHEDULE).orElseThrow().lastJob() != null);
		UUID job = this.schedules.get(SCHEDULE).orElseThrow().lastJob();
		awaitNotice("Ran schedule " + SCHEDULE + " now: job " + job);
		assertThat(text(row + " td.last-tick")).contains("job " + job.toString().substring(0, 8));
		await().atMost(TIMEOUT).until(() -> "completed".equals(stateOf(job)));

		click(row + " button.delete");
		awaitNotice("Schedule " + SCHEDULE + " deleted");
		assertThat(browser.findElements(By.cssSelector(row))).isEmpty();
		assertThat(this.schedules.get(SCHEDULE)).isEmpty();
	}

	private String dashboard() {
		return "http://localhost:" + this.port + "/pgqueue";
	}

	private String stateOf(UUID id) {
		return this.jdbc.queryForObject("SELECT state FROM " + schema.name() + ".pgqueue_all_jobs WHERE public_id = ?",
				String.class, id);
	}

	/** The element's text, once it is there (the page may be reloading a part). */
	private static String text(String selector) {
		return await().atMost(TIMEOUT)
			.ignoreExceptions()
			.until(() -> browser.findElement(By.cssSelector(selector)).getText(), (text) -> true);
	}

	/** Waits for the page an action sent the browser to, by its notice. */
	private static void awaitNotice(String notice) {
		await().atMost(TIMEOUT).ignoreExceptions().until(() -> text(".notice").equals(notice));
	}

	/** Clicks the element, finding it again if the page's reload replaced it in between. */
	private static void click(String selector) {
		await().atMost(TIMEOUT).ignoreExceptionsInstanceOf(StaleElementReferenceException.class).until(() -> {
			WebElement element = browser.findElement(By.cssSelector(selector));
			element.click();
			return true;
		});
	}

	@Component
	static class DashboardListeners {

		private final Set<UUID> failed = ConcurrentHashMap.newKeySet();

		@JobListener(kind = "dashboard.fails-once", queue = "mail")
		void failsOnce(Job job) {
			if (this.failed.add(job.id())) {
				throw new IllegalStateException("fails the first time");
			}
		}

		@JobListener(kind = "dashboard.works", queue = "mail")
		void works(Job job) {
		}

		final Set<UUID> started = ConcurrentHashMap.newKeySet();

		/** Runs until a cancel reaches it, or 60 s. */
		@JobListener(kind = "dashboard.runs-until-cancelled", queue = "mail")
		void runsUntilCancelled(Job job, dev.pgqueue.JobContext context) throws InterruptedException {
			this.started.add(job.id());
			long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (!context.isCancellationRequested() && System.nanoTime() < end) {
				Thread.sleep(20);
			}
		}

	}

	/** Drops the schema when the context closes, after the pollers have stopped. */
	@TestConfiguration(proxyBeanMethods = false)
	static class DropSchemaOnClose {

		@Bean
		DisposableBean dropTestSchema() {
			return schema::close;
		}

	}

}
