package dev.pgqueue.testkit;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;

/** Customizes the context of test classes annotated {@link IsolatedQueueSchema} (or enclosed in one). */
final class IsolatedQueueSchemaContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		IsolatedQueueSchema isolated = TestContextAnnotationUtils.findMergedAnnotation(testClass,
				IsolatedQueueSchema.class);
		return (isolated != null) ? new IsolatedQueueSchemaContextCustomizer(testClass, isolated.applicationTables())
				: null;
	}

}
