package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobContext;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * Registers, ahead of time, what a native image needs to run the {@link dev.pgqueue.JobListener
 * @JobListener} methods of a bean: {@link JobListenerMethodProcessor} finds them by reflection and
 * {@link JobListenerMethodAdapter} invokes them, so each method is registered for invocation; Jackson
 * reads the payload parameter's type and writes the returned type, so both get binding hints
 * (constructors, properties, record components, nested types). The payload type's {@code package-info}
 * is registered where there is one, so that a {@code @NullMarked} package still makes its properties
 * required in a native image.
 *
 * <p>Listed in {@code META-INF/spring/aot.factories}; it finds the methods with the same search as
 * the processor, on the class each bean definition declares. A bean whose definition declares only an
 * interface (a {@code @Bean} method returning one) is not seen: register its hints by hand.
 */
class JobListenerBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Collection<Method> methods = JobListenerMethodProcessor.listenerMethods(registeredBean.getBeanClass())
			.keySet();
		if (methods.isEmpty()) {
			return null;
		}
		List<Method> listeners = List.copyOf(methods);
		return (generationContext, code) -> registerHints(generationContext.getRuntimeHints().reflection(),
				listeners);
	}

	private static void registerHints(ReflectionHints hints, Collection<Method> listeners) {
		BindingReflectionHintsRegistrar binding = new BindingReflectionHintsRegistrar();
		for (Method method : listeners) {
			hints.registerMethod(method, ExecutableMode.INVOKE);
			for (int i = 0; i < method.getParameterCount(); i++) {
				Class<?> type = method.getParameterTypes()[i];
				if (type != Job.class && type != JobContext.class) {
					binding.registerReflectionHints(hints, method.getGenericParameterTypes()[i]);
					registerPackageInfo(hints, ResolvableType.forMethodParameter(new MethodParameter(method, i)));
				}
			}
			Class<?> returned = method.getReturnType();
			if (returned != void.class && returned != Void.class && !ExternalEffect.class.isAssignableFrom(returned)) {
				binding.registerReflectionHints(hints, method.getGenericReturnType());
			}
		}
	}

	/** The package annotations JSpecify reads for the payload type (or an {@code Optional}'s). */
	private static void registerPackageInfo(ReflectionHints hints, ResolvableType payload) {
		ResolvableType type = (payload.toClass() == Optional.class) ? payload.getGeneric(0) : payload;
		Class<?> resolved = type.resolve();
		if (resolved == null || resolved.isPrimitive() || resolved.isArray() || resolved.getName().startsWith("java.")) {
			return;
		}
		String packageInfo = resolved.getPackageName() + ".package-info";
		if (ClassUtils.isPresent(packageInfo, resolved.getClassLoader())) {
			hints.registerType(ClassUtils.resolveClassName(packageInfo, resolved.getClassLoader()));
		}
	}

}
