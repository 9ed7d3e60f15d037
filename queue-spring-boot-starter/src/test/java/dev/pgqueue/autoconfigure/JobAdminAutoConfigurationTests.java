package dev.pgqueue.autoconfigure;

import java.util.List;

import javax.sql.DataSource;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.support.ConfigurableConversionService;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the {@link JobAdmin} of {@link QueueAutoConfiguration}, who it names as the caller, and
 * the {@code pgqueue} endpoint of {@link QueueEndpointAutoConfiguration}.
 */
class JobAdminAutoConfigurationTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_admin_config");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
		// As SpringApplication does, so that management.endpoint.pgqueue.access=none converts.
		.withInitializer((context) -> context.getEnvironment()
			.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void namesTheAuthenticatedUserAsTheCallerWhenSpringSecurityIsThere() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(JobAdmin.class)
				.hasBean("pgqueueJobAdmin")
				.getBean(AdminCaller.class)
				.isInstanceOf(SecurityContextAdminCaller.class);
			SecurityContextHolder.getContext()
				.setAuthentication(new TestingAuthenticationToken("on-call", "n/a", "ROLE_OPS"));
			context.getBean(JobAdmin.class).pause("secured");
			assertThat(pausedBy(context, "secured")).isEqualTo("on-call");
			SecurityContextHolder.clearContext();
			assertThat(context.getBean(AdminCaller.class).name()).isEqualTo("unknown");
			context.getBean(JobAdmin.class).resume("secured");
		});
	}

	@Test
	void namesEveryCallerSystemWithoutSpringSecurity() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(SecurityContextHolder.class)).run((context) -> {
			assertThat(context).hasSingleBean(JobAdmin.class).doesNotHaveBean(AdminCaller.class);
			context.getBean(JobAdmin.class).pause("unsecured");
			assertThat(pausedBy(context, "unsecured")).isEqualTo("system");
			context.getBean(JobAdmin.class).resume("unsecured");
		});
	}

	@Test
	void usesTheApplicationsOwnCallerAndJobAdmin() {
		this.contextRunner.withUserConfiguration(OwnCaller.class).run((context) -> {
			context.getBean(JobAdmin.class).pause("own-caller");
			assertThat(pausedBy(context, "own-caller")).isEqualTo("batch-operator");
			context.getBean(JobAdmin.class).resume("own-caller");
		});
		this.contextRunner.withUserConfiguration(OwnJobAdmin.class)
			.run((context) -> assertThat(context).hasSingleBean(JobAdmin.class)
				.hasBean("ownJobAdmin")
				.doesNotHaveBean("pgqueueJobAdmin"));
	}

	@Test
	void offersTheEndpointOnlyWhenItIsExposedAndActuatorIsThere() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(QueueEndpoint.class));
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=pgqueue")
			.run((context) -> assertThat(context).hasSingleBean(QueueEndpoint.class));
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=pgqueue",
					"management.endpoint.pgqueue.access=none")
			.run((context) -> assertThat(context).doesNotHaveBean(QueueEndpoint.class));
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=pgqueue")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasSingleBean(JobAdmin.class).doesNotHaveBean(QueueEndpoint.class));
	}

	private static String pausedBy(AssertableApplicationContext context, String queue) {
		List<String> by = context.getBean(JdbcTemplate.class)
			.queryForList("SELECT paused_by FROM " + SCHEMA.name() + ".pgqueue_queue_pauses WHERE queue = ?",
					String.class, queue);
		return by.isEmpty() ? null : by.get(0);
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnCaller {

		@Bean
		AdminCaller batchOperator() {
			return () -> "batch-operator";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnJobAdmin {

		@Bean
		JobAdmin ownJobAdmin(DataSource dataSource) {
			return QueueEngine.builder(dataSource).adminCaller(() -> "audited").processing(false).build().admin();
		}

	}

}
