package dev.pgqueue.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Gives a {@code @SpringBootTest} class a {@link QueueTester} bean, as Spring Boot's
 * {@code @AutoConfigureMockMvc} gives one a {@code MockMvc}. The auto-configurations it imports are
 * listed in {@code META-INF/spring/dev.pgqueue.testkit.AutoConfigureQueueTester.imports}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureQueueTester {

}
