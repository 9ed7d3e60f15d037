package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Thousands of random and malicious HTTP requests to every read and write operation of the
 * {@code pgqueue} endpoint (access unrestricted) and every page and form of the dashboard (writes
 * allowed without security), in an application that runs a queue: raw and percent-encoded garbage in
 * paths, odd query parameters, odd JSON and form bodies, wrong content types, huge values. No request
 * is answered with a 5xx; a read, and a write that is refused (4xx), changes nothing in the database;
 * the jobs that were there before are left as they were; the queue's poller still runs a job at the
 * end.
 *
 * <p>The requests come from a seeded {@link Random}: the seed is printed, and
 * {@code -Dpgqueue.fuzz.seed=<seed>} replays a run ({@code -Dpgqueue.fuzz.requests=<n>} changes its
 * size). Every broken property is collected, one example per kind of failure, and reported with the
 * seed at the end.
 */
@SpringBootTest(classes = HostileRequestsTests.HostileApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,pgqueue",
				"management.endpoint.pgqueue.access=unrestricted", "management.endpoint.pgqueue.show-values=always",
				"pgqueue.dashboard.enabled=true", "pgqueue.dashboard.allow-writes-without-security=true",
				"pgqueue.queues.hostile.poll-interval=100ms", "pgqueue.shutdown-timeout=5s",
				"pgqueue.schedules.hostile-tick.cron=0 0 3 * * *", "pgqueue.schedules.hostile-tick.kind=hostile.work",
				"pgqueue.schedules.hostile-tick.queue=hostile", "logging.level.dev.pgqueue=WARN",
				"logging.level.org.springframework.web=ERROR", "logging.level.org.apache.catalina=ERROR",
				"spring.autoconfigure.exclude=org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
class HostileRequestsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_hostile_requests");

	private static final String QUEUE = "hostile";

	private static final String SENTINEL_QUEUE = "sentinel";

	/**
	 * The seed: the one given, else a fixed one in CI (where a build must pass or fail on its change,
	 * not on the draw), else a new one each run, which explores new values on a developer's machine.
	 */
	private static final long SEED = Long.getLong("pgqueue.fuzz.seed",
			(System.getenv("CI") != null) ? 45_045_045L : System.nanoTime());

	private static final int REQUESTS = Integer.getInteger("pgqueue.fuzz.requests", 3000);

	private static final Map<UUID, String> ran = new ConcurrentHashMap<>();

	/** What the application threw for a request that failed, by the request's {@code X-Fuzz} header. */
	private static final Map<String, String> thrown = new ConcurrentHashMap<>();

	private int sent;

	private final Random random = new Random(SEED);

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	/** One example of each kind of failure, by a signature of the failure. */
	private final Map<String, String> failures = new LinkedHashMap<>();

	private final Map<String, Integer> tally = new LinkedHashMap<>();

	private final List<UUID> sentinelIds = new ArrayList<>();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		SCHEMA.register(registry);
	}

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JdbcTemplate jdbc;

	@Test
	void noHostileRequestGetsA5xxOrChangesStateWhenRefused() throws Exception {
		System.out.println("HostileRequestsTests: seed " + SEED + " (-Dpgqueue.fuzz.seed=" + SEED + "), " + REQUESTS
				+ " requests");
		enqueueSentinels();
		List<Map<String, Object>> sentinels = sentinelRows();
		for (int i = 0; i < REQUESTS; i++) {
			send(randomRequest());
		}
		System.out.println("HostileRequestsTests: seed " + SEED + ", " + this.tally);
		if (!sentinelRows().equals(sentinels)) {
			failure("sentinels", "jobs that were there before changed", sentinels + " became " + sentinelRows());
		}
		UUID last = this.jobs.enqueue(JobRequest.of("hostile.work", Map.of("still", "running")).queue(QUEUE));
		await().atMost(TIMEOUT).until(() -> ran.containsKey(last));
		assertThat(SCHEMA.stateOf(this.jdbc, last)).isEqualTo("completed");
		this.failures.forEach((what, example) -> System.out.println("HostileRequestsTests failure: " + what
				+ "\n    e.g. " + example));
		assertThat(this.failures).as("failures with seed %d (replay with -Dpgqueue.fuzz.seed=%d)", SEED, SEED)
			.isEmpty();
	}

	private void enqueueSentinels() {
		this.sentinelIds.add(this.jobs.enqueue(JobRequest.of("sentinel.available", Map.of("k", "v"))
			.queue(SENTINEL_QUEUE)
			.tags("customer-1")));
		this.sentinelIds.add(this.jobs.enqueue(JobRequest.of("sentinel.scheduled", List.of(1, 2))
			.queue(SENTINEL_QUEUE)
			.delay(Duration.ofDays(30))));
		UUID failed = this.jobs.enqueue(JobRequest.of("sentinel.failed", "x").queue(SENTINEL_QUEUE));
		UUID completed = this.jobs.enqueue(JobRequest.of("sentinel.completed", null).queue(SENTINEL_QUEUE));
		this.jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_jobs SET state = 'failed', attempt = 1, "
				+ "finished_at = now(), last_error = 'boom: % _ '' -- ;' WHERE public_id = ?", failed);
		this.jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_jobs SET state = 'completed', attempt = 1, "
				+ "started_at = now(), finished_at = now() WHERE public_id = ?", completed);
		this.sentinelIds.add(failed);
		this.sentinelIds.add(completed);
	}

	// Requests

	private record Request(String method, String path, String contentType, String body, Map<String, String> headers) {

		boolean writes() {
			return !this.method.equals("GET");
		}

		@Override
		public String toString() {
			return this.method + " " + abbreviate(this.path) + ((this.contentType != null) ? " [" + this.contentType + "]" : "")
					+ ((this.body != null) ? " body " + abbreviate(show(this.body)) : "") + (this.headers.isEmpty() ? ""
							: " headers " + this.headers);
		}

	}

	private Request randomRequest() {
		return switch (this.random.nextInt(14)) {
			case 0 -> get("/actuator/pgqueue" + (this.random.nextBoolean() ? "" : "?" + randomQuery()));
			case 1, 2 -> get("/actuator/pgqueue/" + segment(endpointResource()) + "?" + endpointQuery());
			case 3 -> get("/actuator/pgqueue/" + segment(endpointResource()) + "/" + segment(jobIdOrName()) + "?"
					+ randomQuery());
			case 4 -> endpointBulk();
			case 5 -> write("POST", "/actuator/pgqueue/" + segment(endpointResource()) + "/" + segment(targetName()) + "/"
					+ segment(actionName()), randomContentType(), randomJsonBody());
			case 6 -> write("DELETE", "/actuator/pgqueue/" + segment(endpointResource()) + "/" + segment(targetName()),
					randomContentType(), null);
			case 7 -> get("/pgqueue" + (this.random.nextBoolean() ? "/" : "") + "?" + dashboardQuery());
			case 8 -> get("/pgqueue/jobs/find?id=" + encode(jobIdOrName()));
			case 9 -> get("/pgqueue/jobs/bulk?action=" + encode(actionName()) + "&" + dashboardQuery());
			case 10 -> dashboardBulk();
			case 11 -> get("/pgqueue/jobs/" + segment(jobIdOrName()) + "?did=" + encode(hostileString()) + "&outcome="
					+ encode(hostileString()));
			case 12 -> write("POST", "/pgqueue/" + segment(pick(List.of("jobs", "queues", "schedules", hostileString())))
					+ "/" + segment(targetName()) + "/" + segment(actionName()), randomContentType(),
					this.random.nextBoolean() ? null : randomFormBody());
			default -> get(pick(List.of("/pgqueue/dashboard.css", "/pgqueue/dashboard.js", "/pgqueue/..%2F..%2Fetc",
					"/pgqueue/%2e%2e/actuator", "/actuator/pgqueue/..;/..", "/pgqueue/jobs", "/pgqueue/jobs/",
					"/actuator/pgqueue//jobs", "/pgqueue/" + segment(hostileString()))));
		};
	}

	private Request get(String path) {
		return new Request("GET", path, null, null, randomHeaders());
	}

	private Request write(String method, String path, String contentType, String body) {
		return new Request(method, path, contentType, body, randomHeaders());
	}

	/** A bulk action of the endpoint: always on a queue of its own, so that none may touch the sentinels. */
	private Request endpointBulk() {
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put("action", this.random.nextInt(4) == 0 ? hostileString() : pick(List.of("retry", "cancel")));
		fields.put("queue", "q-" + hostileString());
		for (String name : List.of("kind", "state", "tag", "error", "finishedSince", "failedFor", "batchSize",
				"atMost")) {
			if (this.random.nextInt(3) == 0) {
				fields.put(name, randomJsonValue());
			}
		}
		String body = switch (this.random.nextInt(10)) {
			case 0 -> randomJsonBody();
			default -> toJson(fields);
		};
		return write("POST", "/actuator/pgqueue/" + segment(this.random.nextInt(5) == 0 ? hostileString() : "jobs"),
				randomContentType(), body);
	}

	/** A bulk action of the dashboard: also always on a queue of its own. */
	private Request dashboardBulk() {
		String body = "action=" + encode(this.random.nextInt(4) == 0 ? hostileString() : pick(List.of("retry", "cancel")))
				+ "&queue=" + encode("q-" + hostileString()) + "&" + filters(false);
		return write("POST", "/pgqueue/jobs/bulk", this.random.nextInt(5) == 0 ? randomContentType()
				: "application/x-www-form-urlencoded", body);
	}

	private String endpointQuery() {
		return filters(true) + optional("limit", pick(List.of("1", "50", "500", "501", "0")))
				+ optional("count", pick(List.of("true", "false"))) + optional("hours", pick(List.of("1", "24", "168")))
				+ optional("step", pick(List.of("1", "5", "60")));
	}

	private String dashboardQuery() {
		return filters(true) + optional("schedule", hostileString()) + optional("did", hostileString())
				+ optional("outcome", hostileString()) + optional("job", UUID.randomUUID().toString())
				+ optional("changed", String.valueOf(this.random.nextInt())) + optional("hours", pick(List.of("1", "6",
						"24", "168")));
	}

	/**
	 * A parameter, or none: a value that cannot be converted (most {@link #number()}s) ends the request
	 * with 400 before it reaches the operation, so it is given in one case of six, a plausible value
	 * in two, none in three.
	 */
	private String optional(String name, String plausible) {
		return switch (this.random.nextInt(6)) {
			case 0 -> "&" + name + "=" + encode(pick(List.of(number(), hostileString())));
			case 1, 2 -> "&" + name + "=" + encode(plausible);
			default -> "";
		};
	}

	/** The job filters, each left out, hostile or plausible; with {@code withQueue}, the queue filter too. */
	private String filters(boolean withQueue) {
		StringBuilder query = new StringBuilder();
		Map<String, List<String>> plausible = Map.of("state", List.of("failed", "available", "scheduled", "running",
				"completed", "cancelled", "FAILED", " failed "), "finishedSince", List.of("2026-01-01T00:00:00Z",
				"+300000-01-01T00:00:00Z", "-5000-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2026-13-45T99:00:00Z"),
				"before", List.of("0", "9223372036854775807", "9223372036854775808", "s.1.x", "s" + ".".repeat(1500),
						"-1"));
		for (String name : withQueue ? List.of("queue", "kind", "state", "tag", "error", "finishedSince", "before")
				: List.of("kind", "state", "tag", "error", "finishedSince", "before")) {
			int choice = this.random.nextInt(4);
			if (choice == 0) {
				continue;
			}
			String value = (choice == 1 && plausible.containsKey(name)) ? pick(plausible.get(name)) : hostileString();
			if (name.equals("queue") && (QUEUE.equals(value) || SENTINEL_QUEUE.equals(value))) {
				value = value + "-other";
			}
			query.append(query.isEmpty() ? "" : "&").append(name).append('=').append(encode(value));
		}
		if (this.random.nextInt(5) == 0) {
			query.append("&").append(encode(hostileString())).append('=').append(encode(hostileString()));
		}
		return query.toString();
	}

	private String randomQuery() {
		StringBuilder query = new StringBuilder();
		int count = this.random.nextInt(4);
		for (int i = 0; i < count; i++) {
			query.append(i > 0 ? "&" : "")
				.append(pick(List.of("payload", "output", "limit", "x", encode(hostileString()))))
				.append('=')
				.append(encode(pick(List.of("true", "false", number(), hostileString()))));
		}
		return query.toString();
	}

	private String endpointResource() {
		return pick(List.of("jobs", "jobs", "kinds", "schedules", "history", "queues", "kinds", hostileString()));
	}

	private String jobIdOrName() {
		return switch (this.random.nextInt(7)) {
			case 0 -> UUID.randomUUID().toString();
			case 1 -> pick(this.sentinelIds).toString();
			case 2 -> "00000000-0000-0000-0000-00000000000" + this.random.nextInt(10);
			case 3 -> "hostile-tick";
			case 4 -> UUID.randomUUID().toString().toUpperCase() + pick(List.of("", " ", "0", "%00"));
			default -> hostileString();
		};
	}

	/** A job id or a name to act on: never the sentinels' nor this test's queue. */
	private String targetName() {
		String name = switch (this.random.nextInt(5)) {
			case 0 -> UUID.randomUUID().toString();
			case 1 -> "hostile-tick";
			default -> hostileString();
		};
		return (QUEUE.equals(name) || SENTINEL_QUEUE.equals(name)) ? name + "-other" : name;
	}

	private String actionName() {
		return pick(List.of("retry", "cancel", "pause", "resume", "retry-failed", "run-now", "delete", "explode",
				hostileString()));
	}

	/**
	 * A content type, right or wrong. None with a wildcard ({@code text/}{@code *}): Spring MVC answers 500 to a request
	 * body of that type on every {@code @RequestBody} (Actuator's own write operations included), as
	 * {@code HttpHeaders.setContentType} refuses a wildcard; that is the framework's, not the starter's.
	 */
	private String randomContentType() {
		return pick(List.of("application/json", "application/json", "application/vnd.spring-boot.actuator.v3+json",
				"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
				"application/json; charset=ebcdic", "application/xml", "garbage", ""));
	}

	private String randomJsonBody() {
		return switch (this.random.nextInt(10)) {
			case 0 -> null;
			case 1 -> "";
			case 2 -> "{";
			case 3 -> "[1,2,3]";
			case 4 -> "\"action\"";
			case 5 -> "{\"action\":" + "[".repeat(2000) + "]".repeat(2000) + "}";
			case 6 -> "{\"action\":\"" + "x".repeat(200_000) + "\"}";
			case 7 -> "{\"action\":\"retry\",\"action\":\"cancel\",\"queue\":\"q-dup\"}";
			default -> {
				Map<String, Object> fields = new LinkedHashMap<>();
				int count = this.random.nextInt(5);
				for (int i = 0; i < count; i++) {
					fields.put(pick(List.of("action", "queue", "kind", "batchSize", "atMost", hostileString())),
							randomJsonValue());
				}
				yield toJson(fields);
			}
		};
	}

	private Object randomJsonValue() {
		return switch (this.random.nextInt(8)) {
			case 0 -> null;
			case 1 -> this.random.nextBoolean();
			case 2 -> new RawJson(pick(List.of("0", "-1", "1", "2147483648", "-2147483649", "9223372036854775808", "1e99",
					"1.5", "-0", "1E-400", "1" + "0".repeat(2000))));
			case 3 -> List.of(hostileString());
			case 4 -> Map.of("a", hostileString());
			default -> hostileString();
		};
	}

	private String randomFormBody() {
		StringBuilder body = new StringBuilder();
		int count = this.random.nextInt(4);
		for (int i = 0; i < count; i++) {
			body.append(i > 0 ? "&" : "")
				.append(pick(List.of("action", "queue", "_csrf", encode(hostileString()))))
				.append('=')
				.append(this.random.nextInt(5) == 0 ? pick(List.of("%", "%zz", "%00", "%C0%AF")) : encode(hostileString()));
		}
		return body.toString();
	}

	private Map<String, String> randomHeaders() {
		Map<String, String> headers = new LinkedHashMap<>();
		if (this.random.nextInt(6) == 0) {
			headers.put("Accept", pick(List.of("application/json", "text/html", "application/xml", "*/*",
					"application/vnd.spring-boot.actuator.v2+json", "garbage/garbage;q=x")));
		}
		if (this.random.nextInt(8) == 0) {
			headers.put("Origin", pick(List.of("http://localhost:" + this.port, "http://evil.example", "null", "%%")));
		}
		if (this.random.nextInt(10) == 0) {
			headers.put("Sec-Fetch-Site", pick(List.of("same-origin", "cross-site", "none", "\u00e9")));
		}
		if (this.random.nextInt(10) == 0) {
			headers.put("X-Forwarded-Host", pick(List.of("evil.example", "localhost:" + this.port, "")));
		}
		return headers;
	}

	private String number() {
		return pick(List.of("0", "-1", "1", "60", "2147483647", "2147483648", "-2147483649", "9223372036854775808",
				"1e99", "1.5", "NaN", "", " ", "0x10", "٣", String.valueOf(this.random.nextInt())));
	}

	// Sending

	private void send(Request request) {
		URI uri;
		try {
			// What a URI lets through raw, except characters outside ASCII, which no client sends raw.
			uri = URI.create(URI.create("http://localhost:" + this.port + request.path()).toASCIIString());
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			// The JDK's URI cannot encode half a surrogate pair (toASCIIString throws an NPE).
			count("not a URI");
			return;
		}
		String id = String.valueOf(++this.sent);
		HttpRequest.Builder builder = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("X-Fuzz", id);
		HttpRequest.BodyPublisher body = (request.body() != null) ? BodyPublishers.ofByteArray(request.body().getBytes(StandardCharsets.UTF_8))
				: BodyPublishers.noBody();
		builder.method(request.method(), body);
		if (request.contentType() != null && !request.contentType().isEmpty()) {
			builder.header("Content-Type", request.contentType());
		}
		try {
			request.headers().forEach(builder::header);
		}
		catch (IllegalArgumentException ex) {
			count("header not sendable");
		}
		String before = fingerprint();
		long rows = countRows();
		List<Map<String, Object>> sentinels = sentinelRows();
		HttpResponse<String> response;
		try {
			response = this.http.send(builder.build(), BodyHandlers.ofString());
		}
		catch (Exception ex) {
			failure(request.method(), "no answer: " + ex.getClass().getSimpleName(), request + " -> " + ex);
			return;
		}
		int status = response.statusCode();
		count(request.method() + " " + (status / 100) + "xx");
		if (status >= 500) {
			failure(request.method() + " " + route(request.path()), "answered " + status + " (" + thrown.get(id) + ")",
					request + " -> " + status + " " + abbreviate(response.body()));
		}
		if (!sentinelRows().equals(sentinels)) {
			failure(request.method() + " " + route(request.path()), "changed a job that was there before (" + status
					+ ")", request.toString());
		}
		if (!request.writes() || status >= 400) {
			if (!fingerprint().equals(before) || countRows() != rows) {
				failure(request.method() + " " + route(request.path()), "a read or refused write (" + status
						+ ") changed the database", request.toString());
			}
		}
	}

	/** The route a path takes, for grouping failures: its first segments, without their values. */
	private static String route(String path) {
		String[] parts = path.split("\\?")[0].split("/");
		StringBuilder route = new StringBuilder();
		for (int i = 1; i < parts.length && i < 4; i++) {
			String part = parts[i];
			route.append('/').append(Set.of("actuator", "pgqueue", "jobs", "queues", "schedules", "kinds", "history", "bulk",
					"find").contains(part) ? part : "*");
		}
		return route.toString();
	}

	// The database

	/**
	 * The jobs outside the queue the poller works on, the paused queues and the schedules, as one
	 * digest; and every job's count separately ({@link #countRows()}).
	 */
	private String fingerprint() {
		String schema = SCHEMA.name();
		return this.jdbc.queryForObject("SELECT concat_ws(':', (SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM "
				+ schema + ".pgqueue_all_jobs t WHERE queue <> ?), (SELECT md5(string_agg(p::text, '|' ORDER BY queue)) FROM "
				+ schema + ".pgqueue_queue_pauses p), (SELECT md5(string_agg(s::text, '|' ORDER BY name)) FROM "
				+ schema + ".pgqueue_schedules s))", String.class, QUEUE);
	}

	private long countRows() {
		return this.jdbc.queryForObject("SELECT count(*) FROM " + SCHEMA.name() + ".pgqueue_all_jobs", Long.class);
	}

	private List<Map<String, Object>> sentinelRows() {
		return this.jdbc
			.queryForList("SELECT public_id, kind, queue, state, payload::text, priority, run_at, attempt, max_attempts, "
					+ "last_error, created_at, started_at, finished_at, tags::text FROM " + SCHEMA.name()
					+ ".pgqueue_all_jobs WHERE queue = ? ORDER BY id", SENTINEL_QUEUE);
	}

	// Values

	private static final List<String> PIECES = List.of("", " ", "\t", "\r\n", "'", "\"", "--", ";", "%", "_", "\\",
			"' OR '1'='1", "'; DROP TABLE pgqueue_jobs; --", "$1", "?", "/", "..", "../..", ".", "#", "a/b", "%2F",
			"%00", "%252F", "{", "}", "[", "]", "&", "=", "+", "\u202Eevil", "\u05E9\u05DC\u05D5\u05DD",
			"\uD83D\uDE00", "e\u0301", "\u200B", "\uFEFF", "\u00A0", "\u2028", "\uD800", "\uDC00", "\uFFFF", "null",
			"undefined", "NaN", "default", "mail", "a.b-c_d:e", "<script>alert(1)</script>", "${jndi:ldap://x}",
			"%s%n", "\\u0000", String.valueOf((char) 0), "a" + (char) 0 + "b", String.valueOf((char) 0x7F),
			String.valueOf((char) 0x1B) + "[31m", "jobs", "retry", "cancel", "pause", "hostile-tick");

	private String hostileString() {
		Random random = this.random;
		switch (random.nextInt(11)) {
			case 0:
				return PIECES.get(random.nextInt(PIECES.size()));
			case 10:
				// PostgreSQL's text cannot hold U+0000: every value must be refused or kept from SQL.
				return pick(PIECES) + (char) 0 + pick(PIECES);
			case 1:
				return "x".repeat(pick(List.of(199, 200, 201, 1000, 5000, 20_000)));
			case 2: {
				StringBuilder text = new StringBuilder();
				int length = 1 + random.nextInt(20);
				for (int i = 0; i < length; i++) {
					text.append((char) random.nextInt(0x10000));
				}
				return text.toString();
			}
			case 3: {
				StringBuilder text = new StringBuilder();
				int length = 1 + random.nextInt(6);
				for (int i = 0; i < length; i++) {
					text.append((char) random.nextInt(0x20));
				}
				return text.toString();
			}
			default: {
				StringBuilder text = new StringBuilder();
				int pieces = 1 + random.nextInt(4);
				for (int i = 0; i < pieces; i++) {
					text.append(PIECES.get(random.nextInt(PIECES.size())));
					if (random.nextBoolean()) {
						text.append((char) ('a' + random.nextInt(26)));
					}
				}
				return text.toString();
			}
		}
	}

	/** A path segment: mostly percent-encoded, sometimes raw (what a URI lets through as it is). */
	private String segment(String value) {
		if (this.random.nextInt(4) == 0) {
			return value;
		}
		return encode(value).replace("+", "%20");
	}

	private static String encode(String value) {
		return URLEncoder.encode(value, StandardCharsets.UTF_8);
	}

	private static String toJson(Map<String, Object> fields) {
		StringBuilder json = new StringBuilder("{");
		fields.forEach((name, value) -> {
			if (json.length() > 1) {
				json.append(',');
			}
			json.append(jsonValue(name)).append(':').append(jsonValue(value));
		});
		return json.append('}').toString();
	}

	private static String jsonValue(Object value) {
		if (value == null || value instanceof Boolean || value instanceof Number || value instanceof RawJson) {
			return String.valueOf(value);
		}
		if (value instanceof List<?> list) {
			return "[" + String.join(",", list.stream().map(HostileRequestsTests::jsonValue).toList()) + "]";
		}
		if (value instanceof Map<?, ?> map) {
			@SuppressWarnings("unchecked")
			Map<String, Object> fields = (Map<String, Object>) map;
			return toJson(fields);
		}
		StringBuilder text = new StringBuilder("\"");
		for (char ch : value.toString().toCharArray()) {
			if (ch == '"' || ch == '\\') {
				text.append('\\').append(ch);
			}
			else if (ch < 0x20) {
				text.append(String.format("\\u%04x", (int) ch));
			}
			else {
				text.append(ch);
			}
		}
		return text.append('"').toString();
	}

	private <T> T pick(List<T> values) {
		return values.get(this.random.nextInt(values.size()));
	}

	private void failure(String operation, String what, String example) {
		this.failures.putIfAbsent(operation + ": " + what, abbreviate(example));
	}

	private void count(String outcome) {
		this.tally.merge(outcome, 1, Integer::sum);
	}

	private static String show(String value) {
		StringBuilder text = new StringBuilder();
		for (char ch : value.toCharArray()) {
			if (ch < 0x20 || ch == 0x7F || Character.isSurrogate(ch)) {
				text.append(String.format("<%04X>", (int) ch));
			}
			else {
				text.append(ch);
			}
		}
		return text.toString();
	}

	private static String abbreviate(String text) {
		return (text != null && text.length() > 400) ? text.substring(0, 400) + "…(" + text.length() + " chars)" : text;
	}

	/** A JSON literal written as it is. */
	private record RawJson(String text) {

		@Override
		public String toString() {
			return this.text;
		}

	}

	@Component
	static class HostileListener {

		@JobListener(kind = "hostile.work", queue = QUEUE)
		void work(Map<String, Object> payload, Job job) {
			ran.put(job.id(), String.valueOf(payload));
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(HostileListener.class)
	static class HostileApplication {

		/** Notes the root cause of what a request threw, to name it beside the 5xx it became. */
		@Bean
		Filter notesWhatRequestsThrow() {
			return (request, response, chain) -> {
				try {
					chain.doFilter(request, response);
				}
				catch (IOException | ServletException | RuntimeException | Error ex) {
					Throwable root = ex;
					while (root.getCause() != null) {
						root = root.getCause();
					}
					String message = String.valueOf(root.getMessage()).split("\n")[0];
					thrown.put(String.valueOf(((HttpServletRequest) request).getHeader("X-Fuzz")),
							root.getClass().getSimpleName() + ": " + message.replaceAll("[0-9]+", "#"));
					throw ex;
				}
			};
		}

	}

}
