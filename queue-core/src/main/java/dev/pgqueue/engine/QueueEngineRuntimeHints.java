package dev.pgqueue.engine;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * The methods the engine calls by reflection, for a native image: {@code Thread.isVirtual()} (which
 * JDK 17 lacks, so it is looked up) and HikariCP's pool size and soft eviction (HikariCP is not a
 * dependency of pgqueue; the engine uses them when the application's pool is HikariCP's), and the
 * pool's settings from which the notification listener opens a session of its own. Without them the
 * engine still runs, but never warns of a pool too small for a queue, never has the pool replace its
 * connections after one is lost, listens on a connection borrowed from the pool, and treats every
 * thread as a platform thread. Listed in
 * {@code META-INF/spring/aot.factories}.
 */
class QueueEngineRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		ReflectionHints reflection = hints.reflection();
		reflection.registerType(Thread.class, (hint) -> hint.withMethod("isVirtual", List.of(), ExecutableMode.INVOKE));
		// Only where the application's image has HikariCP.
		invoke(reflection, "com.zaxxer.hikari.HikariConfig", "getMaximumPoolSize");
		// The settings the notification listener opens its own session with (NotificationConnections).
		for (String getter : List.of("getJdbcUrl", "getUsername", "getPassword", "getDataSourceProperties",
				"getDataSource")) {
			invoke(reflection, "com.zaxxer.hikari.HikariConfig", getter);
		}
		invoke(reflection, "com.zaxxer.hikari.HikariDataSource", "getHikariPoolMXBean");
		invoke(reflection, "com.zaxxer.hikari.pool.HikariPool", "softEvictConnections");
	}

	private static void invoke(ReflectionHints reflection, String type, String method) {
		TypeReference reference = TypeReference.of(type);
		reflection.registerType(reference, (hint) -> hint.onReachableType(reference)
			.withMethod(method, List.of(), ExecutableMode.INVOKE));
	}

}
