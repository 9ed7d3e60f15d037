package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.util.List;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead of time, the {@code @JobListener} methods of each bean are registered for invocation, and
 * their payload and returned types for Jackson, by the processor that {@code aot.factories} lists.
 */
class JobListenerBeanRegistrationAotProcessorTests {

	private final DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();

	@Test
	void aListenerMethodIsRegisteredForInvocationAndItsPayloadForJackson() throws Exception {
		RuntimeHints hints = process(Listeners.class);

		Method listener = Listeners.class.getDeclaredMethod("onInvoice", Invoice.class, Job.class);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(listener)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Invoice.class)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Invoice.class, "customer")).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Customer.class)).as("a type nested in the payload")
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Receipt.class)).as("the type the listener returns")
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Class.forName(getClass().getPackageName()
				+ ".package-info"))).as("the payload's @NullMarked package").accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Job.class)).as("the Job is no payload").rejects(hints);
	}

	@Test
	void aListedPayloadTypeIsRegisteredForJackson() throws Exception {
		RuntimeHints hints = process(Listeners.class);

		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(Listeners.class.getDeclaredMethod("onBatch", List.class))).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(Line.class)).accepts(hints);
	}

	@Test
	void aBeanWithoutListenersContributesNothing() {
		this.beanFactory.registerBeanDefinition("plain", new RootBeanDefinition(Plain.class));

		assertThat(processor().processAheadOfTime(RegisteredBean.of(this.beanFactory, "plain"))).isNull();
	}

	private RuntimeHints process(Class<?> beanClass) {
		this.beanFactory.registerBeanDefinition("bean", new RootBeanDefinition(beanClass));
		BeanRegistrationAotContribution contribution = processor()
			.processAheadOfTime(RegisteredBean.of(this.beanFactory, "bean"));
		assertThat(contribution).isNotNull();
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		contribution.applyTo(generationContext, null);
		return generationContext.getRuntimeHints();
	}

	/** The processor as Spring's AOT processing finds it. */
	private static BeanRegistrationAotProcessor processor() {
		return AotServices.factories()
			.load(BeanRegistrationAotProcessor.class)
			.stream()
			.filter(JobListenerBeanRegistrationAotProcessor.class::isInstance)
			.findFirst()
			.orElseThrow(() -> new AssertionError("No JobListenerBeanRegistrationAotProcessor in aot.factories"));
	}

	static class Listeners {

		@JobListener(kind = "invoice.send")
		Receipt onInvoice(Invoice invoice, Job job) {
			return new Receipt(invoice.number());
		}

		@JobListener(kind = "invoice.lines")
		void onBatch(List<Line> lines) {
		}

	}

	static class Plain {

		void onInvoice(Invoice invoice) {
		}

	}

	record Invoice(String number, Customer customer) {
	}

	record Customer(String name) {
	}

	record Line(String item, int quantity) {
	}

	record Receipt(String number) {
	}

}
