package dev.pgqueue.autoconfigure.dashboard;

import java.io.IOException;
import java.net.CookieManager;
import java.net.HttpCookie;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.Schedule;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CookieCsrfTokenRepository;
import org.springframework.security.web.csrf.CsrfTokenRequestAttributeHandler;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard over real HTTP in an application with Spring Security, on a real PostgreSQL. The
 * application's own filter chain permits every request and signs users in with HTTP Basic, so what
 * these tests see of who may look and act is the dashboard's own rule. Its CSRF tokens live in a
 * cookie (unmasked), so that a test can send one for a user whose page has no forms.
 */
@SpringBootTest(classes = DashboardSecurityTests.SecuredApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "pgqueue.dashboard.enabled=true", "pgqueue.queues.dashboard.poll-interval=100ms",
				"pgqueue.shutdown-timeout=5s",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
@ExtendWith(OutputCaptureExtension.class)
class DashboardSecurityTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static final TestSchema SCHEMA = TestDatabase.get().createSchema("pgqueue_dashboard_security");

	private static final Pattern ACTION_FORM = Pattern
		.compile("<form method=\"post\" class=\"action\" action=\"([^\"]+)\">((?:<input type=\"hidden\"[^>]*>)*)");

	/** As the dashboard writes times. */
	private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'", Locale.ROOT)
		.withZone(ZoneOffset.UTC);

	private static final Pattern HIDDEN_FIELD = Pattern.compile("name=\"([^\"]+)\" value=\"([^\"]*)\"");

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestDatabase database = SCHEMA.database();
		registry.add("spring.datasource.url", database::jdbcUrl);
		if (database.username() != null) {
			registry.add("spring.datasource.username", database::username);
		}
		if (database.password() != null) {
			registry.add("spring.datasource.password", database::password);
		}
		registry.add("pgqueue.schema.name", SCHEMA::name);
	}

	@AfterAll
	static void dropSchema() {
		SCHEMA.close();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JobSchedules schedules;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private QueueEngine engine;

	private final CookieManager cookies = new CookieManager();

	private final HttpClient http = HttpClient.newBuilder()
		.cookieHandler(this.cookies)
		.followRedirects(HttpClient.Redirect.NEVER)
		.build();

	@Test
	void asksAnonymousUsersToSignInWhereTheApplicationPermitsAll() throws Exception {
		HttpResponse<String> page = send(request("/pgqueue", null).GET());

		assertThat(page.statusCode()).isEqualTo(401);
		assertThat(page.headers().firstValue("WWW-Authenticate")).hasValueSatisfying((value) -> assertThat(value)
			.startsWith("Basic"));
		assertThat(send(request("/pgqueue/dashboard.js", null).GET()).statusCode()).isEqualTo(401);
	}

	@Test
	void showsUsersWithoutTheWriteRoleNoButtonsAndRefusesTheirActions() throws Exception {
		UUID id = failedJob();

		HttpResponse<String> page = send(request("/pgqueue", "viewer").GET());
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(page.body()).contains("<tr data-job=\"" + id + "\">")
			.contains("read-only: acting needs role PGQUEUE_ADMIN")
			.doesNotContain("method=\"post\"");

		String token = csrfCookie();
		HttpResponse<String> retry = send(request("/pgqueue/jobs/" + id + "/retry", "viewer")
			.header("X-XSRF-TOKEN", token)
			.POST(BodyPublishers.noBody()));
		HttpResponse<String> pause = send(request("/pgqueue/queues/dashboard/pause", "viewer")
			.header("X-XSRF-TOKEN", token)
			.POST(BodyPublishers.noBody()));
		assertThat(retry.statusCode()).isEqualTo(403);
		assertThat(pause.statusCode()).isEqualTo(403);
		assertThat(stateOf(id)).isEqualTo("failed");
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM " + SCHEMA.name() + ".pgqueue_queue_pauses",
				Integer.class)).isZero();
	}

	@Test
	void letsUsersWithTheWriteRoleRetryWithThePagesFormAndLogsTheirName(CapturedOutput output) throws Exception {
		UUID id = failedJob();
		HttpResponse<String> page = send(request("/pgqueue/jobs/" + id, "operator").GET());
		assertThat(page.statusCode()).isEqualTo(200);
		Matcher form = ACTION_FORM.matcher(page.body());
		assertThat(form.find()).as("a form that acts on job " + id + " in:%n%s", page.body()).isTrue();
		assertThat(form.group(1)).isEqualTo("/pgqueue/jobs/" + id + "/retry");

		HttpResponse<String> withoutToken = send(request(form.group(1), "operator").POST(BodyPublishers.noBody()));
		assertThat(withoutToken.statusCode()).isEqualTo(403);
		assertThat(stateOf(id)).isEqualTo("failed");

		HttpResponse<String> retried = send(request(form.group(1), "operator")
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(BodyPublishers.ofString(formBody(form.group(2)))));
		assertThat(retried.statusCode()).isEqualTo(303);
		assertThat(retried.headers().firstValue("Location"))
			.hasValue("/pgqueue/jobs/" + id + "?did=retry&outcome=applied");
		await().atMost(TIMEOUT).until(() -> "completed".equals(stateOf(id)));
		assertThat(output).contains("operator asked to retry job " + id);
	}

	@Test
	void showsEachQueuesHistoryAsThreeChartsOverTheWindowTheUserPicks() throws Exception {
		UUID id = this.jobs.enqueue(JobRequest.of("dashboard.fail-once", "history").queue("dashboard"));
		await().atMost(TIMEOUT).until(() -> "completed".equals(stateOf(id)));
		EngineInternals.of(this.engine).historyFlusher().flush();

		HttpResponse<String> page = send(request("/pgqueue", "viewer").GET());
		assertThat(page.statusCode()).isEqualTo(200);
		String history = historyBlock(page.body(), "dashboard");
		assertThat(history.split("<svg ", -1)).as("three charts in:%n%s", history).hasSize(4);
		assertThat(history).contains("<title id=\"h0-throughput-title\">Attempts of queue dashboard per 5 min, last 6 h</title>")
			.contains("<polyline class=\"completed\"")
			.contains("<polyline class=\"failed\"")
			.contains(">6 h ago<")
			.containsPattern("Latest: \\d+ completed, \\d+ failed, \\d+ retried per 5 min");
		// The step where the job completed is the chart's highest point: at the top of the plot.
		assertThat(history).containsPattern("<polyline class=\"completed\" points=\"[^\"]*,8\\.0 ");
		assertThat(page.body()).contains("<strong aria-current=\"true\">6 h</strong>")
			.contains("<a href=\"/pgqueue?hours=24\">24 h</a>");

		HttpResponse<String> day = send(request("/pgqueue?hours=24", "viewer").GET());
		assertThat(historyBlock(day.body(), "dashboard")).contains("per 20 min, last 24 h").contains(">24 h ago<");
	}

	/** The history block of a queue on the overview. */
	private static String historyBlock(String page, String queue) {
		int start = page.indexOf("<div class=\"history\" data-queue=\"" + queue + "\">");
		assertThat(start).as("a history block of queue %s in:%n%s", queue, page).isNotNegative();
		return page.substring(start, page.indexOf("</figure></div>", start));
	}

	@Test
	void listsSchedulesToUsersWithoutTheWriteRoleWithoutButtonsAndRefusesTheirActions() throws Exception {
		String name = "viewer:report.daily";
		ScheduleDetails saved = this.schedules.save(Schedule.of(name, "0 0 2 * * *", "dashboard.report")
			.zone("Europe/Paris"));

		HttpResponse<String> page = send(request("/pgqueue", "viewer").GET());
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(scheduleRow(page.body(), name)).contains("<code>0 0 2 * * *</code> Europe/Paris")
			.contains("<td class=\"next-tick\">" + TIME.format(saved.nextTick()) + "</td>")
			.contains("<td class=\"status\">running</td>")
			.contains("<td>API</td>");
		assertThat(page.body()).contains("<h2>Schedules</h2>").doesNotContain("method=\"post\"");

		String token = csrfCookie();
		for (String action : new String[] { "pause", "resume", "run-now", "delete" }) {
			HttpResponse<String> refused = send(request("/pgqueue/schedules/" + name + "/" + action, "viewer")
				.header("X-XSRF-TOKEN", token)
				.POST(BodyPublishers.noBody()));
			assertThat(refused.statusCode()).as(action).isEqualTo(403);
		}
		ScheduleDetails after = this.schedules.get(name).orElseThrow();
		assertThat(after.paused()).isFalse();
		assertThat(after.lastJob()).isNull();
		assertThat(jobsOfKind("dashboard.report")).isZero();
	}

	@Test
	void letsUsersWithTheWriteRolePauseResumeRunAndDeleteASchedule() throws Exception {
		String name = "ops:nightly.report_v2-a";
		this.schedules.save(Schedule.of(name, "0 0 2 * * *", "dashboard.nightly"));

		assertThat(scheduleRow(send(request("/pgqueue", "operator").GET()).body(), name))
			.contains("<code>0 0 2 * * *</code> UTC");

		String paused = actOnSchedule(name, "pause", "done");
		assertThat(this.schedules.get(name).orElseThrow().pausedBy()).isEqualTo("operator");
		assertThat(paused).contains("<p class=\"notice\" role=\"status\">Schedule " + name + " paused</p>");
		assertThat(scheduleRow(paused, name)).contains("paused by operator since ");
		HttpResponse<String> again = send(request("/pgqueue/schedules/" + name + "/pause", "operator")
			.header("X-XSRF-TOKEN", csrfCookie())
			.POST(BodyPublishers.noBody()));
		assertThat(again.headers().firstValue("Location"))
			.hasValue("/pgqueue?schedule=" + name + "&did=pause&outcome=unchanged");

		String resumed = actOnSchedule(name, "resume", "done");
		assertThat(this.schedules.get(name).orElseThrow().paused()).isFalse();
		assertThat(resumed).contains("Schedule " + name + " resumed");
		assertThat(scheduleRow(resumed, name)).contains("<td class=\"status\">running</td>");

		assertThat(this.schedules.get(name).orElseThrow().lastJob()).isNull();
		String ran = actOnSchedule(name, "run-now", "done");
		UUID job = this.schedules.get(name).orElseThrow().lastJob();
		assertThat(job).isNotNull();
		assertThat(this.jdbc.queryForObject("SELECT kind FROM " + SCHEMA.name() + ".pgqueue_all_jobs WHERE public_id = ?",
				String.class, job)).isEqualTo("dashboard.nightly");
		assertThat(ran).contains("Ran schedule " + name + " now: job <a href=\"/pgqueue/jobs/" + job + "\">" + job);
		assertThat(scheduleRow(ran, name)).contains("<td class=\"last-tick\"><a href=\"/pgqueue/jobs/" + job + "\">");

		String deleted = actOnSchedule(name, "delete", "done");
		assertThat(this.schedules.get(name)).isEmpty();
		assertThat(deleted).contains("Schedule " + name + " deleted").doesNotContain("data-schedule=\"" + name + "\"");
	}

	@Test
	void answersAnActionOnAnUnknownScheduleWithANotice() throws Exception {
		send(request("/pgqueue", "operator").GET());
		String token = csrfCookie();
		for (String action : new String[] { "pause", "resume", "run-now", "delete" }) {
			HttpResponse<String> done = send(request("/pgqueue/schedules/no-such.schedule/" + action, "operator")
				.header("X-XSRF-TOKEN", token)
				.POST(BodyPublishers.noBody()));
			assertThat(done.statusCode()).as(action).isEqualTo(303);
			assertThat(done.headers().firstValue("Location")).as(action)
				.hasValue("/pgqueue?schedule=no-such.schedule&did=" + action + "&outcome=not_found");
			HttpResponse<String> page = send(request(done.headers().firstValue("Location").get(), "operator").GET());
			assertThat(page.statusCode()).as(action).isEqualTo(200);
			assertThat(page.body()).as(action).contains("No schedule named no-such.schedule");
		}
	}

	/**
	 * Posts the form of the schedule's row on the operator's page that does the action, checks that it
	 * sends the browser back to the overview with what came of it, and returns that page.
	 */
	private String actOnSchedule(String name, String action, String outcome) throws Exception {
		HttpResponse<String> page = send(request("/pgqueue", "operator").GET());
		String path = "/pgqueue/schedules/" + name + "/" + action;
		Matcher form = ACTION_FORM.matcher(scheduleRow(page.body(), name));
		String fields = null;
		while (fields == null && form.find()) {
			fields = form.group(1).equals(path) ? form.group(2) : null;
		}
		assertThat(fields).as("a form that posts to " + path + " in:%n%s", page.body()).isNotNull();

		HttpResponse<String> done = send(request(path, "operator")
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(BodyPublishers.ofString(formBody(fields))));
		assertThat(done.statusCode()).isEqualTo(303);
		String location = done.headers().firstValue("Location").orElseThrow();
		assertThat(location).startsWith("/pgqueue?schedule=" + name + "&did=" + action + "&outcome=" + outcome);
		return send(request(location, "operator").GET()).body();
	}

	private static String scheduleRow(String page, String name) {
		Matcher row = Pattern.compile("<tr data-schedule=\"" + Pattern.quote(name) + "\">.*?</tr>").matcher(page);
		assertThat(row.find()).as("a row for schedule " + name + " in:%n%s", page).isTrue();
		return row.group();
	}

	private int jobsOfKind(String kind) {
		return this.jdbc.queryForObject("SELECT count(*) FROM " + SCHEMA.name() + ".pgqueue_all_jobs WHERE kind = ?",
				Integer.class, kind);
	}

	private UUID failedJob() {
		UUID id = this.jobs.enqueue(JobRequest.of("dashboard.fail-once", "work").queue("dashboard").maxAttempts(1));
		await().atMost(TIMEOUT).until(() -> "failed".equals(stateOf(id)));
		return id;
	}

	private String stateOf(UUID id) {
		return this.jdbc.queryForObject("SELECT state FROM " + SCHEMA.name() + ".pgqueue_all_jobs WHERE public_id = ?",
				String.class, id);
	}

	private String csrfCookie() {
		return this.cookies.getCookieStore()
			.getCookies()
			.stream()
			.filter((cookie) -> cookie.getName().equals("XSRF-TOKEN"))
			.map(HttpCookie::getValue)
			.findFirst()
			.orElseThrow(() -> new AssertionError("The dashboard's page set no XSRF-TOKEN cookie"));
	}

	private static String formBody(String hiddenFields) {
		Map<String, String> fields = new LinkedHashMap<>();
		Matcher field = HIDDEN_FIELD.matcher(hiddenFields);
		while (field.find()) {
			fields.put(field.group(1), field.group(2));
		}
		assertThat(fields).as("hidden fields of the form").isNotEmpty();
		return fields.entrySet()
			.stream()
			.map((entry) -> URLEncoder.encode(entry.getKey(), StandardCharsets.UTF_8) + "="
					+ URLEncoder.encode(entry.getValue(), StandardCharsets.UTF_8))
			.collect(Collectors.joining("&"));
	}

	private HttpRequest.Builder request(String path, String user) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(TIMEOUT);
		if (user != null) {
			String credentials = user + ":secret";
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return request;
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return this.http.send(request.build(), BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableWebSecurity
	@Import(FailingOnceListener.class)
	static class SecuredApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.csrfTokenRepository(CookieCsrfTokenRepository.withHttpOnlyFalse())
					.csrfTokenRequestHandler(new CsrfTokenRequestAttributeHandler()))
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(User.withUsername("viewer").password("{noop}secret").roles("VIEWER").build(),
					User.withUsername("operator").password("{noop}secret").roles("PGQUEUE_ADMIN").build());
		}

	}

	@Component
	static class FailingOnceListener {

		private final Set<UUID> failedOnce = ConcurrentHashMap.newKeySet();

		@JobListener(kind = "dashboard.fail-once", queue = "dashboard")
		void work(Job job) {
			if (this.failedOnce.add(job.id())) {
				throw new IllegalStateException("first run fails");
			}
		}

	}

}
