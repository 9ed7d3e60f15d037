package dev.pgqueue.embedded;

import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL server that tests run against, chosen once per JVM, in this order:
 * <ol>
 * <li>{@value #URL_VARIABLE} (with optional {@value #USERNAME_VARIABLE} and {@value #PASSWORD_VARIABLE})
 * from the environment or a system property of the same name;</li>
 * <li>a Testcontainers PostgreSQL ({@code postgres:<major>-alpine}, the {@linkplain
 * EmbeddedPostgresServer#packedMajor() build's major}) when Testcontainers is on the class path and a
 * Docker engine answers;</li>
 * <li>an {@link EmbeddedPostgresServer} (as root, run as an unprivileged account);</li>
 * <li>if that cannot start either, an {@link IllegalStateException} that says how to provide a
 * server. A test is never skipped for want of a database.</li>
 * </ol>
 * The container or embedded server lives as long as the JVM.
 */
public final class TestPostgres {

	public static final String URL_VARIABLE = "PGQUEUE_TEST_JDBC_URL";

	public static final String USERNAME_VARIABLE = "PGQUEUE_TEST_USERNAME";

	public static final String PASSWORD_VARIABLE = "PGQUEUE_TEST_PASSWORD";

	private static volatile @Nullable TestPostgres instance;

	private final String jdbcUrl;

	private final @Nullable String username;

	private final @Nullable String password;

	private final String origin;

	private final @Nullable EmbeddedPostgresServer embedded;

	private TestPostgres(String jdbcUrl, @Nullable String username, @Nullable String password, String origin,
			@Nullable EmbeddedPostgresServer embedded) {
		this.jdbcUrl = jdbcUrl;
		this.username = username;
		this.password = password;
		this.origin = origin;
		this.embedded = embedded;
	}

	/** The server of this JVM, started the first time if it has to be. */
	public static TestPostgres get() {
		TestPostgres server = instance;
		if (server == null) {
			synchronized (TestPostgres.class) {
				server = instance;
				if (server == null) {
					server = resolve();
					instance = server;
				}
			}
		}
		return server;
	}

	private static TestPostgres resolve() {
		String url = setting(URL_VARIABLE);
		if (url != null) {
			return new TestPostgres(url, setting(USERNAME_VARIABLE), setting(PASSWORD_VARIABLE), URL_VARIABLE, null);
		}
		TestPostgres container = Containers.start();
		if (container != null) {
			return container;
		}
		EmbeddedPostgresServer server;
		try {
			server = EmbeddedPostgresServer.start();
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("""
					These tests need a real PostgreSQL and found none: %s is not set, no Docker engine answers \
					(or Testcontainers is not on the class path), and an embedded PostgreSQL did not start (%s).
					Either point them at a server:
					    export %s='jdbc:postgresql://127.0.0.1:5432/test?user=postgres'
					(optionally %s and %s), or start a Docker engine so that Testcontainers can run one.
					Database tests are never skipped."""
				.formatted(URL_VARIABLE, ex.getMessage(), URL_VARIABLE, USERNAME_VARIABLE, PASSWORD_VARIABLE), ex);
		}
		return new TestPostgres(server.jdbcUrl("postgres"), null, null,
				"an embedded PostgreSQL " + EmbeddedPostgresServer.packedVersion() + " on port " + server.port(),
				server);
	}

	private static @Nullable String setting(String name) {
		String value = System.getProperty(name);
		if (value == null || value.isBlank()) {
			value = System.getenv(name);
		}
		return (value == null || value.isBlank()) ? null : value.trim();
	}

	public String jdbcUrl() {
		return this.jdbcUrl;
	}

	/** The user name, or {@code null} when the URL carries it. */
	public @Nullable String username() {
		return this.username;
	}

	/** The password, or {@code null} when the URL carries it or none is needed. */
	public @Nullable String password() {
		return this.password;
	}

	/** Where the server came from, for messages. */
	public String origin() {
		return this.origin;
	}

	/** The embedded server, which tests may stop and start again; null for a URL or a container. */
	public @Nullable EmbeddedPostgresServer embeddedServer() {
		return this.embedded;
	}

	/** Testcontainers, touched only when it is on the class path. */
	private static final class Containers {

		static @Nullable TestPostgres start() {
			try {
				Class.forName("org.testcontainers.postgresql.PostgreSQLContainer", false,
						TestPostgres.class.getClassLoader());
			}
			catch (ClassNotFoundException | LinkageError ex) {
				return null;
			}
			return Docker.startIfAvailable();
		}

	}

	/** The Testcontainers calls, in a class of their own so that nothing loads them without it. */
	private static final class Docker {

		static @Nullable TestPostgres startIfAvailable() {
			boolean available;
			try {
				available = org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
			}
			catch (RuntimeException | LinkageError ex) {
				available = false;
			}
			if (!available) {
				return null;
			}
			var container = new org.testcontainers.postgresql.PostgreSQLContainer(
					"postgres:" + EmbeddedPostgresServer.packedMajor() + "-alpine");
			container.start();
			Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "pgqueue-test-postgres-stop"));
			return new TestPostgres(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
					"Testcontainers " + container.getDockerImageName(), null);
		}

	}

}
