package dev.pgqueue.engine;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeHint;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The methods the engine looks up by reflection are registered for a native image by the hints
 * that {@code aot.factories} lists.
 */
class QueueEngineRuntimeHintsTests {

	@Test
	void theMethodsTheEngineLooksUpAreRegistered() {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories().load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));

		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HikariConfig.class, "getMaximumPoolSize"))
			.accepts(hints);
		for (String getter : new String[] { "getJdbcUrl", "getUsername", "getPassword", "getDataSourceProperties",
				"getDataSource" }) {
			assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HikariConfig.class, getter))
				.as("HikariConfig.%s, read by NotificationConnections", getter)
				.accepts(hints);
		}
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HikariDataSource.class, "getHikariPoolMXBean"))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HikariPool.class, "softEvictConnections"))
			.accepts(hints);
		// Thread.isVirtual() is not on JDK 17, where this test may run: read the hint itself.
		TypeHint thread = hints.reflection().getTypeHint(Thread.class);
		assertThat(thread).isNotNull();
		assertThat(thread.methods()).anyMatch((method) -> method.getName().equals("isVirtual"));
	}

}
