package dev.pgqueue.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * Registers, ahead of time, the exception classes that {@code pgqueue.queues.<name>.non-retryable-exceptions}
 * names, as the build's environment has them: Spring Boot loads each class by its name when it binds
 * the property, which in a native image finds only the classes registered for reflection.
 *
 * <p>A class named only where the native application runs (an environment variable, a configuration
 * file that the build did not see) is not registered: the application fails at start-up saying that it
 * cannot convert the name to a class. Such a class needs a hint of the application's own
 * ({@code RuntimeHints.reflection().registerType(...)}). Listed in {@code META-INF/spring/aot.factories}.
 */
class NonRetryableExceptionsAotProcessor implements BeanFactoryInitializationAotProcessor {

	private static final String QUEUES = "pgqueue.queues";

	@Override
	public @Nullable BeanFactoryInitializationAotContribution processAheadOfTime(
			ConfigurableListableBeanFactory beanFactory) {
		if (!beanFactory.containsBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME)) {
			return null;
		}
		Environment environment = beanFactory.getBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME,
				Environment.class);
		Set<String> classNames = classNames(environment);
		if (classNames.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> {
			ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
			classNames.forEach((name) -> reflection.registerType(TypeReference.of(name)));
		};
	}

	/** The class names of every queue's non-retryable exceptions, bound as names (no class is loaded). */
	static Set<String> classNames(Environment environment) {
		Map<String, ExceptionNames> queues = Binder.get(environment)
			.bind(QUEUES, Bindable.mapOf(String.class, ExceptionNames.class))
			.orElse(Map.of());
		Set<String> names = new TreeSet<>();
		queues.values()
			.stream()
			.map(ExceptionNames::nonRetryableExceptions)
			.filter(Objects::nonNull)
			.flatMap(List::stream)
			.map(String::strip)
			.filter((name) -> !name.isEmpty())
			.forEach(names::add);
		return names;
	}

	/** A queue's settings, of which only the names of its non-retryable exceptions are read. */
	record ExceptionNames(@Nullable List<String> nonRetryableExceptions) {

	}

}
