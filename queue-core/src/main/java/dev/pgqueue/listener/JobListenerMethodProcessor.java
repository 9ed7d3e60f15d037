package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.JobListener;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.aop.framework.autoproxy.AutoProxyUtils;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Finds {@link JobListener @JobListener} methods on singleton beans once all singletons exist, and
 * registers an adapter for each in the {@link JobHandlerRegistry}. Classes without listeners are
 * remembered and not inspected again.
 *
 * <p>It only registers: the engine, started later with the application's lifecycle, creates one
 * poller per queue of the registry.
 */
public class JobListenerMethodProcessor implements SmartInitializingSingleton, BeanFactoryAware {

	private static final Logger logger = LoggerFactory.getLogger(JobListenerMethodProcessor.class);

	private final JobHandlerRegistry registry;

	private final JsonMapper jsonMapper;

	private final Set<Class<?>> classesWithoutListeners = Collections.newSetFromMap(new ConcurrentHashMap<>(64));

	private ConfigurableListableBeanFactory beanFactory;

	public JobListenerMethodProcessor(JobHandlerRegistry registry, JsonMapper jsonMapper) {
		this.registry = registry;
		this.jsonMapper = jsonMapper;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
		if (!(beanFactory instanceof ConfigurableListableBeanFactory listable)) {
			throw new IllegalStateException("@JobListener discovery needs a ConfigurableListableBeanFactory");
		}
		this.beanFactory = listable;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String beanName : this.beanFactory.getBeanNamesForType(Object.class, false, false)) {
			if (ScopedProxyUtils.isScopedTarget(beanName)) {
				continue;
			}
			Class<?> type = AutoProxyUtils.determineTargetClass(this.beanFactory, beanName);
			if (type != null) {
				processBean(beanName, type);
			}
		}
	}

	/**
	 * The {@code @JobListener} methods of a bean class, each with its annotation; empty when it has
	 * none. The one search for them, at runtime and ahead of time alike.
	 */
	static Map<Method, JobListener> listenerMethods(Class<?> targetType) {
		if (!AnnotationUtils.isCandidateClass(targetType, JobListener.class)) {
			return Map.of();
		}
		return MethodIntrospector.selectMethods(targetType,
				(MethodIntrospector.MetadataLookup<JobListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, JobListener.class));
	}

	private void processBean(String beanName, Class<?> targetType) {
		if (this.classesWithoutListeners.contains(targetType)) {
			return;
		}
		Map<Method, JobListener> annotated = listenerMethods(targetType);
		if (annotated.isEmpty()) {
			this.classesWithoutListeners.add(targetType);
			return;
		}
		Object bean = this.beanFactory.getBean(beanName);
		annotated.forEach((method, annotation) -> {
			Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
			JobListenerMethodAdapter adapter = new JobListenerMethodAdapter(bean, invocable, annotation,
					this.jsonMapper);
			this.registry.register(adapter);
			logger.debug("Registered @JobListener {} for kind '{}' in queue '{}'", adapter.description(),
					adapter.kind(), adapter.queue());
		});
	}

}
