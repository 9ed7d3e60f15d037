package dev.pgqueue.autoconfigure.dashboard;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.autoconfigure.QueueAutoConfiguration;
import dev.pgqueue.QueueShards;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.filter.GenericFilterBean;
import org.springframework.web.servlet.DispatcherServlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link QueueDashboardAutoConfiguration}: when the dashboard is served, where, and what
 * it lets a user without Spring Security do. Its {@link JobAdmin} is {@link RecordingJobAdmin}, except
 * for the shards, which are three schemas of the test database; the dashboard against PostgreSQL and
 * Spring Security is covered by {@link DashboardSecurityTests} and the sample application's browser test.
 */
class QueueDashboardAutoConfigurationTests {

	private static final String FAILED_JOB = RecordingJobAdmin.FAILED_JOB.toString();

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(QueueDashboardAutoConfiguration.class, WebMvcAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class))
		.withBean(RecordingJobAdmin.class, RecordingJobAdmin::new);

	/** Three shards as three schemas of the test database; the third from a DataSource bean that can refuse. */
	private static final String SHARDS_SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 12);

	private static final List<String> SHARD_SCHEMAS = List.of("app", "s1", "s2", "s3")
		.stream()
		.map((name) -> "pgqueue_dashboard_" + name + "_" + SHARDS_SUFFIX)
		.toList();

	@AfterAll
	static void dropShardSchemas() throws SQLException {
		try (Connection connection = TestDatabase.get().connect()) {
			for (String schema : SHARD_SCHEMAS) {
				connection.createStatement().execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
			}
		}
	}

	@Test
	void isOffUnlessEnabled() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(DashboardController.class));
	}

	@Test
	void isOffOutsideAServletWebApplication() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(QueueDashboardAutoConfiguration.class))
			.withBean(RecordingJobAdmin.class, RecordingJobAdmin::new)
			.withPropertyValues("pgqueue.dashboard.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(DashboardController.class));
	}

	@Test
	void isOffWithoutSpringMvc() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
			.withPropertyValues("pgqueue.dashboard.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(DashboardController.class));
	}

	@Test
	void servesTheQueuesAndJobsAtItsPath() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			((RecordingJobAdmin) context.getBean(JobAdmin.class)).counts = RecordingJobAdmin.finished("reports", 3, 1);
			String page = mvc(context).perform(get("/pgqueue"))
				.andExpect(status().isOk())
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).contains("<tr data-queue=\"reports\">")
				.contains("<tr data-job=\"" + FAILED_JOB + "\">")
				.contains("/pgqueue/dashboard.js")
				.doesNotContain("Shards")
				.doesNotContain("data-shard");
			mvc(context).perform(get("/pgqueue/jobs/" + FAILED_JOB)).andExpect(status().isOk());
			mvc(context).perform(get("/pgqueue/dashboard.js")).andExpect(status().isOk());
		});
	}

	@Test
	void servesAtTheConfiguredPath() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.path=/ops/queue")
			.run((context) -> {
				mvc(context).perform(get("/ops/queue")).andExpect(status().isOk());
				mvc(context).perform(get("/ops/queue/jobs/" + FAILED_JOB)).andExpect(status().isOk());
				mvc(context).perform(get("/pgqueue")).andExpect(status().isNotFound());
			});
	}

	@Test
	void refusesAPathWithoutALeadingSlash() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.path=pgqueue")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("pgqueue.dashboard.path is 'pgqueue'"));
	}

	@Test
	void hidesTheMessagesOfErrorsByDefaultWithoutSecurityKeepingTheirClasses() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			String page = mvc(context).perform(get("/pgqueue/jobs/" + FAILED_JOB))
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).doesNotContain("printer").contains("java.lang.IllegalStateException: ******");
			String list = mvc(context).perform(get("/pgqueue")).andReturn().getResponse().getContentAsString();
			assertThat(list).contains(FAILED_JOB.toString().substring(0, 8)).doesNotContain("printer");
		});
	}

	@Test
	void showsTheLastErrorEscaped() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.show-values=always")
			.run((context) -> {
			String page = mvc(context).perform(get("/pgqueue/jobs/" + FAILED_JOB))
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).contains("&lt;b&gt;printer&lt;/b&gt; on fire").doesNotContain("<b>printer");
			// The attempt history, escaped as well.
			assertThat(page).contains("<h3>Attempts</h3>")
				.contains("java.lang.IllegalStateException: &lt;b&gt;printer&lt;/b&gt; on fire")
				.contains("<span class=\"state failed\">failed</span>")
				.contains("<dt>Run time</dt><dd>1.0 s</dd>");
			// What its limits count it by: its key (escaped, as a user's value) and its own rate weight.
			assertThat(page).contains("<dt>Concurrency key</dt><dd>&lt;i&gt;acct-7&lt;/i&gt;</dd>")
				.contains("<dt>Rate weight</dt><dd>3</dd>");
		});
	}

	@Test
	void isReadOnlyWithoutSpringSecurity() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(OpenDashboardAccess.class);
			String page = mvc(context).perform(get("/pgqueue")).andReturn().getResponse().getContentAsString();
			assertThat(page).doesNotContain("method=\"post\"").contains("Read-only");
			mvc(context).perform(post("/pgqueue/jobs/" + FAILED_JOB + "/retry")).andExpect(status().isForbidden());
			mvc(context).perform(post("/pgqueue/queues/reports/pause")).andExpect(status().isForbidden());
			mvc(context).perform(post("/pgqueue/schedules/nightly/pause")).andExpect(status().isForbidden());
			assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations).isEmpty();
		});
	}

	@Test
	void actsWithoutSpringSecurityWhenAllowedExplicitly() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				String page = mvc(context).perform(get("/pgqueue")).andReturn().getResponse().getContentAsString();
				assertThat(page).contains("action=\"/pgqueue/jobs/" + FAILED_JOB + "/retry\"");
				mvc(context).perform(post("/pgqueue/jobs/" + FAILED_JOB + "/retry"))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location", "/pgqueue/jobs/" + FAILED_JOB + "?did=retry&outcome=applied"));
				mvc(context).perform(post("/pgqueue/queues/reports/pause"))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location", "/pgqueue"));
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations)
					.containsExactly("retry " + FAILED_JOB, "pause reports");
			});
	}

	@Test
	void refusesAnActionAPageOfAnotherSiteSentAndActsOnItsOwnPagesForms() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				// A cross-site form: what a browser sends with it, without any script.
				mvc(context).perform(post("/pgqueue/queues/reports/pause").header("Sec-Fetch-Site", "cross-site")
					.header("Origin", "http://evil.example")
					.contentType("application/x-www-form-urlencoded"))
					.andExpect(status().isForbidden());
				mvc(context).perform(post("/pgqueue/jobs/" + FAILED_JOB + "/retry").header("Sec-Fetch-Site", "same-site"))
					.andExpect(status().isForbidden());
				// A browser that sends no Sec-Fetch-Site still sends the origin of the page.
				mvc(context).perform(post("/pgqueue/schedules/nightly/pause").header("Origin", "http://evil.example"))
					.andExpect(status().isForbidden());
				mvc(context).perform(post("/pgqueue/jobs/bulk").param("action", "retry").param("state", "failed")
					.header("Origin", "null"))
					.andExpect(status().isForbidden());
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations).isEmpty();

				mvc(context).perform(post("/pgqueue/queues/reports/pause").header("Sec-Fetch-Site", "same-origin")
					.header("Origin", "http://localhost"))
					.andExpect(status().isSeeOther());
				mvc(context).perform(post("/pgqueue/queues/reports/resume").header("Origin", "http://localhost"))
					.andExpect(status().isSeeOther());
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations)
					.containsExactly("pause reports", "resume reports");
			});
	}

	@Test
	void actsOnANameHoldingASemicolonAndNeverOnTheNameItWouldBeCutTo() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				// The server reads what follows a raw ';' as the segment's parameters: "reports;eu" would be "reports".
				mvc(context).perform(post("/pgqueue/queues/reports;eu/pause")).andExpect(status().isBadRequest());
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations).isEmpty();
				// The dashboard's own forms encode it, and the whole name arrives.
				assertThat(DashboardPages.encode("reports;eu")).isEqualTo("reports%3Beu");
				mvc(context).perform(post(java.net.URI.create("/pgqueue/queues/reports%3Beu/pause")))
					.andExpect(status().isSeeOther());
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations)
					.containsExactly("pause reports;eu");
				// A dot is part of the name, never a file extension cut off it.
				assertThat(DashboardPages.encode("reports.eu")).isEqualTo("reports.eu");
				mvc(context).perform(post("/pgqueue/queues/reports.eu/pause")).andExpect(status().isSeeOther());
				assertThat(((RecordingJobAdmin) context.getBean(JobAdmin.class)).operations)
					.containsExactly("pause reports;eu", "pause reports.eu");
			});
	}

	@Test
	void sendsAStrictContentSecurityPolicyAndForbidsFramingAndSniffing() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			for (String path : List.of("/pgqueue", "/pgqueue/dashboard.js", "/pgqueue/jobs/" + FAILED_JOB)) {
				mvc(context).perform(get(path))
					.andExpect(status().isOk())
					.andExpect(header().string("Content-Security-Policy", org.hamcrest.Matchers
						.allOf(org.hamcrest.Matchers.containsString("script-src 'self'"),
								org.hamcrest.Matchers.containsString("frame-ancestors 'none'"),
								org.hamcrest.Matchers.not(org.hamcrest.Matchers.containsString("unsafe-inline")))))
					.andExpect(header().string("X-Content-Type-Options", "nosniff"))
					.andExpect(header().string("X-Frame-Options", "DENY"));
			}
			String page = mvc(context).perform(get("/pgqueue")).andReturn().getResponse().getContentAsString();
			assertThat(page).as("no inline script or style, which the policy would block").doesNotContain("<script>")
				.doesNotContainPattern("<script(?![^>]*\\bsrc=)")
				.doesNotContain("<style")
				.doesNotContain(" style=")
				.doesNotContainPattern(" on[a-z]+=");
		});
	}

	@Test
	void worksWithoutSchedulesWhereTheApplicationHasNoJobSchedules() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(JobSchedules.class);
				String page = mvc(context).perform(get("/pgqueue"))
					.andExpect(status().isOk())
					.andReturn()
					.getResponse()
					.getContentAsString();
				assertThat(page).contains("<div id=\"schedules\" data-live></div>").doesNotContain("<h2>Schedules");
				mvc(context).perform(post("/pgqueue/schedules/nightly/run-now"))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location", "/pgqueue?schedule=nightly&did=run-now&outcome=not_found"));
			});
	}

	@Test
	void keepsAPlusAndASpaceOfASearchThroughItsLinksAndRedirects() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				((RecordingJobAdmin) context.getBean(JobAdmin.class)).matching = 7;
				String page = mvc(context)
					.perform(get("/pgqueue").param("state", "failed").param("error", "C++ parser failed"))
					.andReturn()
					.getResponse()
					.getContentAsString();
				assertThat(page).contains("href=\"/pgqueue/jobs/bulk?state=failed&amp;error=C%2B%2B%20parser%20failed"
						+ "&amp;action=retry\"");
				mvc(context)
					.perform(post("/pgqueue/jobs/bulk").param("action", "retry")
						.param("state", "failed")
						.param("error", "C++ parser failed"))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location",
							"/pgqueue?state=failed&error=C%2B%2B%20parser%20failed&did=retry&changed=7"));
			});
	}

	@Test
	void searchesByEveryFilterAndActsOnAllItsJobsOnceTheCountIsConfirmed() {
		this.contextRunner
			.withPropertyValues("pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true")
			.run((context) -> {
				RecordingJobAdmin admin = (RecordingJobAdmin) context.getBean(JobAdmin.class);
				admin.matching = 1234;
				String page = mvc(context)
					.perform(get("/pgqueue").param("kind", "report.monthly")
						.param("state", "failed")
						.param("tag", "eu")
						.param("error", "on fire")
						.param("finishedSince", "2026-11-26T08:00"))
					.andReturn()
					.getResponse()
					.getContentAsString();
				assertThat(page).contains("<datalist id=\"kinds\"><option value=\"email.welcome\">")
					.contains("name=\"tag\" value=\"eu\"")
					.contains("name=\"error\" maxlength=\"200\" value=\"on fire\"")
					.contains("name=\"finishedSince\" value=\"2026-11-26T08:00\"")
					.contains("<th>Run time</th>")
					.contains("<td class=\"run-time\">1.0 s</td>")
					.contains("Retry all 1234 failed jobs this search matches")
					.contains("href=\"/pgqueue/jobs/bulk?kind=report.monthly&amp;state=failed&amp;tag=eu&amp;error=on%20fire"
							+ "&amp;finishedSince=2026-11-26T08:00:00Z&amp;action=retry\"");
				// Only a search that names more than a state offers to act on all its jobs.
				assertThat(mvc(context).perform(get("/pgqueue?state=failed")).andReturn().getResponse().getContentAsString())
					.doesNotContain("Retry all");
				assertThat(mvc(context).perform(get("/pgqueue?kind=report.monthly&state=completed"))
					.andReturn()
					.getResponse()
					.getContentAsString()).doesNotContain("all 1234");

				String confirm = mvc(context)
					.perform(get("/pgqueue/jobs/bulk?action=retry&kind=report.monthly&state=failed&tag=eu"))
					.andExpect(status().isOk())
					.andReturn()
					.getResponse()
					.getContentAsString();
				assertThat(confirm).contains("This will retry <strong id=\"matching\">1234</strong> failed jobs")
					.contains("kind &#39;report.monthly&#39;, tag &#39;eu&#39;, state failed")
					.contains("<button type=\"submit\" class=\"confirm-retry\">Retry 1234 jobs</button>");
				assertThat(admin.operations).isEmpty();
				mvc(context)
					.perform(post("/pgqueue/jobs/bulk").param("action", "retry")
						.param("kind", "report.monthly")
						.param("state", "failed")
						.param("tag", "eu"))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location",
							"/pgqueue?kind=report.monthly&state=failed&tag=eu&did=retry&changed=1234"));
				mvc(context).perform(post("/pgqueue/jobs/bulk").param("action", "cancel").param("tag", "eu")
					.param("state", "scheduled")).andExpect(status().isSeeOther());
				assertThat(admin.operations).hasSize(2);
				assertThat(admin.operations.get(0)).startsWith("retry all JobQuery[queue=null, kind=report.monthly, "
						+ "state=FAILED");
				assertThat(admin.operations.get(1)).startsWith("cancel all").contains("state=SCHEDULED", "tag=eu");
				// An action the search does not allow is refused before anything is done.
				mvc(context).perform(post("/pgqueue/jobs/bulk").param("action", "cancel").param("kind", "x")
					.param("state", "failed")).andExpect(status().isBadRequest());
				mvc(context).perform(post("/pgqueue/jobs/bulk").param("action", "retry").param("state", "failed"))
					.andExpect(status().isBadRequest());
				assertThat(admin.operations).hasSize(2);
				assertThat(mvc(context).perform(get("/pgqueue?kind=report.monthly&state=failed&did=retry&changed=1234"))
					.andReturn()
					.getResponse()
					.getContentAsString()).contains("Retried 1234 jobs: available to run again.");

				mvc(context).perform(get("/pgqueue/jobs/find?id=" + FAILED_JOB))
					.andExpect(status().isSeeOther())
					.andExpect(header().string("Location", "/pgqueue/jobs/" + FAILED_JOB));
				mvc(context).perform(get("/pgqueue/jobs/find?id=not-an-id")).andExpect(status().isBadRequest());
				mvc(context).perform(get("/pgqueue?finishedSince=yesterday")).andExpect(status().isBadRequest());
			});
	}

	@Test
	void offersNoActionOnAllJobsToAReadOnlyViewer() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			((RecordingJobAdmin) context.getBean(JobAdmin.class)).matching = 7;
			assertThat(mvc(context).perform(get("/pgqueue?kind=report.monthly&state=failed"))
				.andReturn()
				.getResponse()
				.getContentAsString()).doesNotContain("Retry all");
			mvc(context).perform(get("/pgqueue/jobs/bulk?action=retry&kind=report.monthly&state=failed"))
				.andExpect(status().isForbidden());
			mvc(context).perform(post("/pgqueue/jobs/bulk").param("action", "retry").param("kind", "report.monthly")
				.param("state", "failed")).andExpect(status().isForbidden());
		});
	}

	@Test
	void showsWhatCameOfAnAction() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true").run((context) -> {
			String page = mvc(context).perform(get("/pgqueue/jobs/" + FAILED_JOB + "?did=cancel&outcome=not_allowed"))
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).contains("Not done: the job is in a state where it cannot be cancelled.");
		});
	}

	@Test
	void showsEachShardsOwnJobsAndAShardThatDoesNotAnswerBesideTheOthers() {
		shardsRunner().run((context) -> {
			JobClient client = context.getBean(JobClient.class);
			for (int i = 0; i < 2; i++) {
				client.enqueue(JobRequest.of("shard.viewed", i).queue("mail").shard("s1"));
			}
			for (int i = 0; i < 3; i++) {
				client.enqueue(JobRequest.of("shard.viewed", i).queue("<i>reports</i>").shard("s2"));
			}
			client.enqueue(JobRequest.of("shard.viewed", 0).queue("mail").shard("s3").delay(Duration.ofHours(1)));
			QueueShards shards = context.getBean(QueueShards.class);
			Map<String, Integer> slots = context.getBean(QueueEngine.class).layout().orElseThrow().slotCounts();
			String s1 = "<tr data-shard=\"s1\"><td>s1</td><td class=\"status\">yes</td><td>" + slots.get("s1")
					+ "</td><td data-queue=\"mail\"><a href=\"/pgqueue?queue=mail\">mail</a></td>"
					+ "<td class=\"depth\">2</td><td>0</td><td>0</td><td>0</td></tr>";
			String s2 = "<tr data-shard=\"s2\"><td>s2</td><td class=\"status\">yes</td><td>" + slots.get("s2")
					+ "</td><td data-queue=\"&lt;i&gt;reports&lt;/i&gt;\">";
			String page = mvc(context).perform(get("/pgqueue"))
				.andExpect(status().isOk())
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).contains("<h2>Shards</h2><div id=\"shards\" data-live>")
				.contains(s1)
				.contains(s2)
				.contains("&lt;/i&gt;</a></td><td class=\"depth\">3</td>")
				.contains("<tr data-shard=\"s3\"><td>s3</td><td class=\"status\">yes</td><td>" + slots.get("s3")
						+ "</td><td data-queue=\"mail\"><a href=\"/pgqueue?queue=mail\">mail</a></td>"
						+ "<td class=\"depth\">0</td><td>1</td><td>0</td><td>0</td></tr>")
				.doesNotContain("<i>reports");
			assertThat(page.indexOf("data-shard=\"s1\"")).isLessThan(page.indexOf("data-shard=\"s2\""));
			assertThat(page.indexOf("data-shard=\"s2\"")).isLessThan(page.indexOf("data-shard=\"s3\""));

			// As a stopped server: new connections refused, the open ones cut.
			DelegatingDataSource third = (DelegatingDataSource) context.getBean("thirdShard");
			DataSource answering = third.getTargetDataSource();
			third.setTargetDataSource(refusing());
			try (Connection connection = TestDatabase.get().connect()) {
				connection.createStatement().execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
						+ "WHERE application_name = 'pgqueue-dashboard-third-shard'");
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> shards.whyDown("s3") != null);
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				String down = mvc(context).perform(get("/pgqueue"))
					.andExpect(status().isOk())
					.andReturn()
					.getResponse()
					.getContentAsString();
				assertThat(down).contains("<tr data-shard=\"s3\"><td>s3</td><td class=\"status\">no: its last probe failed")
					.contains("<td colspan=\"5\">not counted while it does not answer</td>")
					.contains(s1)
					.contains(s2)
					.contains("The queues&#39; totals add up every shard, and shard s3 does not answer")
					.contains("The jobs are listed from every shard, and shard s3 does not answer")
					.contains("The history adds up every shard, and shard s3 does not answer");
			});
			third.setTargetDataSource(answering);
		});
	}

	@Test
	void isSecuredWhenTheApplicationRunsSpringSecurity() {
		this.contextRunner.withPropertyValues("pgqueue.dashboard.enabled=true")
			.withBean(QueueDashboardAutoConfiguration.SECURITY_FILTER_CHAIN_BEAN_NAME, GenericFilterBean.class,
					() -> new GenericFilterBean() {

						@Override
						public void doFilter(jakarta.servlet.ServletRequest request,
								jakarta.servlet.ServletResponse response, jakarta.servlet.FilterChain chain) {
						}

					})
			.run((context) -> assertThat(context).hasSingleBean(SecuredDashboardAccess.class));
	}

	@Test
	void isOpenWhenSpringSecurityIsAbsent() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(CsrfToken.class))
			.withPropertyValues("pgqueue.dashboard.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(OpenDashboardAccess.class));
	}

	private WebApplicationContextRunner shardsRunner() {
		TestDatabase database = TestDatabase.get();
		List<String> properties = new ArrayList<>(List.of("pgqueue.dashboard.enabled=true", "pgqueue.enabled=false",
				"spring.datasource.url=" + database.jdbcUrl(), "pgqueue.schema.name=" + SHARD_SCHEMAS.get(0)));
		// The shards in their declared order: s1, s2, s3.
		for (int i = 1; i <= 2; i++) {
			properties.add("pgqueue.shards.s" + i + ".url=" + database.jdbcUrl());
			properties.add("pgqueue.shards.s" + i + ".schema=" + SHARD_SCHEMAS.get(i));
			properties.add("pgqueue.shards.s" + i + ".maximum-pool-size=4");
		}
		properties.add("pgqueue.shards.s3.data-source=thirdShard");
		properties.add("pgqueue.shards.s3.schema=" + SHARD_SCHEMAS.get(3));
		if (database.username() != null) {
			properties.addAll(List.of("spring.datasource.username=" + database.username(),
					"pgqueue.shards.s1.username=" + database.username(),
					"pgqueue.shards.s2.username=" + database.username()));
		}
		if (database.password() != null) {
			properties.addAll(List.of("spring.datasource.password=" + database.password(),
					"pgqueue.shards.s1.password=" + database.password(),
					"pgqueue.shards.s2.password=" + database.password()));
		}
		return new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
					QueueDashboardAutoConfiguration.class, WebMvcAutoConfiguration.class,
					DispatcherServletAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class))
			.withPropertyValues(properties.toArray(new String[0]))
			.withUserConfiguration(ThirdShard.class);
	}

	@Test
	void aPageCountsEachShardsJobsOnceForTheQueuesTotalsAndTheShardsSection() {
		shardsRunner().run((context) -> {
			JobClient client = context.getBean(JobClient.class);
			client.enqueue(JobRequest.of("shard.viewed", 0).queue("mail").shard("s3"));
			DelegatingDataSource third = (DelegatingDataSource) context.getBean("thirdShard");
			CountingDataSource counting = new CountingDataSource(third.getTargetDataSource());
			third.setTargetDataSource(counting);
			String page = mvc(context).perform(get("/pgqueue"))
				.andExpect(status().isOk())
				.andReturn()
				.getResponse()
				.getContentAsString();
			assertThat(page).contains("<td class=\"depth\">1</td>");
			assertThat(counting.countsOfJobs).as("counts of s3's jobs for one page").hasValue(1);
		});
	}

	/** A DataSource on a port nothing listens on, as a stopped server: every connection is refused. */
	private static DataSource refusing() throws IOException {
		try (ServerSocket free = new ServerSocket(0)) {
			return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + free.getLocalPort() + "/test");
		}
	}

	private static MockMvc mvc(AssertableWebApplicationContext context) {
		return MockMvcBuilders.webAppContextSetup(context).build();
	}

	/** Counts the statements that count a jobs table's rows by queue and state, on the connections it hands out. */
	static final class CountingDataSource extends DelegatingDataSource {

		final AtomicInteger countsOfJobs = new AtomicInteger();

		CountingDataSource(DataSource target) {
			super(target);
		}

		@Override
		public Connection getConnection() throws SQLException {
			return watched(Connection.class, super.getConnection());
		}

		@Override
		public Connection getConnection(String username, String password) throws SQLException {
			return watched(Connection.class, super.getConnection(username, password));
		}

		private <T> T watched(Class<T> type, T target) {
			return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type },
					(proxy, method, args) -> {
						if (args != null && args.length > 0 && args[0] instanceof String sql
								&& sql.startsWith("SELECT queue, state, count(*) FROM")) {
							this.countsOfJobs.incrementAndGet();
						}
						Object result;
						try {
							result = method.invoke(target, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
						if (method.getReturnType() == Statement.class) {
							return watched(Statement.class, (Statement) result);
						}
						if (method.getReturnType() == PreparedStatement.class) {
							return watched(PreparedStatement.class, (PreparedStatement) result);
						}
						return result;
					}));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ThirdShard {

		@Bean(defaultCandidate = false)
		DataSource thirdShard() {
			TestDatabase database = TestDatabase.get();
			String url = database.jdbcUrl() + (database.jdbcUrl().contains("?") ? "&" : "?")
					+ "ApplicationName=pgqueue-dashboard-third-shard";
			return new DelegatingDataSource(new DriverManagerDataSource(url, database.username(), database.password()));
		}

	}

}
