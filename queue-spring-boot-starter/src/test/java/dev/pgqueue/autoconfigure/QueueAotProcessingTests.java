package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import javax.sql.DataSource;

import dev.pgqueue.JobListener;
import dev.pgqueue.autoconfigure.dashboard.QueueDashboardAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.web.context.servlet.AnnotationConfigServletWebApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.javapoet.ClassName;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring's AOT processing of an application with pgqueue's auto-configuration and the dashboard: it
 * completes (no context is started, so no database is needed), and the hints a native image needs
 * come out of it: the migrations, the dashboard's assets, the {@code @JobListener} methods and their
 * payloads, and the exception classes named by {@code non-retryable-exceptions}.
 */
class QueueAotProcessingTests {

	@Test
	void aotProcessingRegistersWhatANativeImageNeeds() throws Exception {
		RuntimeHints hints = processAheadOfTime("pgqueue.dashboard.enabled=true",
				"pgqueue.queues.mail.non-retryable-exceptions=" + UndeliverableException.class.getName()
						+ ", java.lang.IllegalArgumentException");

		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(Mailer.class.getDeclaredMethod("send", Mail.class))).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Mail.class)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(UndeliverableException.class)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of("java.lang.IllegalArgumentException")))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.resource().forResource("dev/pgqueue/schema/migration/V1__create_jobs.sql"))
			.accepts(hints);
		List<String> assets = dashboardAssets();
		assertThat(assets).isNotEmpty();
		for (String asset : assets) {
			assertThat(RuntimeHintsPredicates.resource().forResource(asset)).as("a resource hint for %s", asset)
				.accepts(hints);
		}
	}

	@Test
	void onlyTheExceptionClassesTheBuildsEnvironmentNamesAreRegistered() {
		RuntimeHints hints = processAheadOfTime();

		assertThat(RuntimeHintsPredicates.reflection().onType(UndeliverableException.class)).rejects(hints);
	}

	private RuntimeHints processAheadOfTime(String... properties) {
		try (AnnotationConfigServletWebApplicationContext context = new AnnotationConfigServletWebApplicationContext()) {
			TestPropertyValues.of(properties).applyTo(context);
			context.register(Application.class);
			DefaultGenerationContext generationContext = new DefaultGenerationContext(
					new ClassNameGenerator(ClassName.get(Application.class)), new InMemoryGeneratedFiles());
			new ApplicationContextAotGenerator().processAheadOfTime(context, generationContext);
			return generationContext.getRuntimeHints();
		}
	}

	/** The dashboard's files other than classes, as the class path has them. */
	private static List<String> dashboardAssets() throws IOException {
		String folder = QueueDashboardAutoConfiguration.class.getPackageName().replace('.', '/');
		Resource[] resources = new PathMatchingResourcePatternResolver().getResources("classpath*:" + folder + "/*");
		return Arrays.stream(resources)
			.map(Resource::getFilename)
			.filter((name) -> !name.endsWith(".class"))
			.map((name) -> folder + "/" + name)
			.toList();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
			QueueDashboardAutoConfiguration.class })
	static class Application {

		@Bean
		DataSource dataSource() {
			return new DriverManagerDataSource("jdbc:postgresql://localhost/never-connected");
		}

		@Bean
		Mailer mailer() {
			return new Mailer();
		}

	}

	static class Mailer {

		@JobListener(kind = "mail.send", queue = "mail")
		void send(Mail mail) {
		}

	}

	record Mail(String to, String subject) {
	}

	static class UndeliverableException extends RuntimeException {

		private static final long serialVersionUID = 1L;

	}

}
