package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.autoconfigure.QueueAutoConfiguration;
import dev.pgqueue.autoconfigure.QueueDashboardProperties;
import dev.pgqueue.autoconfigure.QueueProperties;
import dev.pgqueue.engine.QueueEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.web.method.HandlerTypePredicate;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.PathMatchConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The pgqueue dashboard, served by the application at {@code pgqueue.dashboard.path} once
 * {@code pgqueue.dashboard.enabled=true}, in a servlet web application with Spring MVC.
 *
 * <p>With Spring Security's filter chain in the application, the dashboard needs a signed-in user
 * and acting needs {@code pgqueue.dashboard.write-role}; without it, the dashboard is read-only
 * unless {@code pgqueue.dashboard.allow-writes-without-security=true}.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty("pgqueue.dashboard.enabled")
@ConditionalOnBean(JobAdmin.class)
@EnableConfigurationProperties(QueueProperties.class)
@ImportRuntimeHints(DashboardRuntimeHints.class)
public final class QueueDashboardAutoConfiguration {

	/** The bean Spring Security's filter chain is registered under, by {@code @EnableWebSecurity}. */
	static final String SECURITY_FILTER_CHAIN_BEAN_NAME = "springSecurityFilterChain";

	/** Jobs are counted at most once a second, however many pages are open and however often they reload. */
	private static final Duration MIN_COUNT_GAP = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(QueueDashboardAutoConfiguration.class);

	/**
	 * Without a {@link JobSchedules} (an application that defines its own {@link JobAdmin}), no schedules
	 * are shown; over shards, each shard is shown too.
	 */
	@Bean
	DashboardController pgqueueDashboardController(JobAdmin admin, ObjectProvider<JobSchedules> schedules,
			ObjectProvider<QueueEngine> engine, DashboardAccess access,
			QueueProperties properties) {
		QueueDashboardProperties dashboard = properties.getDashboard();
		String path = path(dashboard);
		logger.info("pgqueue dashboard at {}: {}", path, access.rules());
		// Half the refresh interval: a page that reloads on time finds a fresh count.
		Duration countGap = dashboard.getRefreshInterval().dividedBy(2);
		Duration gap = (countGap.compareTo(MIN_COUNT_GAP) > 0) ? countGap : MIN_COUNT_GAP;
		QueueEngine configured = engine.getIfAvailable();
		ShardSummaries shardSummaries = (configured != null && !configured.shards().names().isEmpty())
				? new ShardSummaries(configured, gap) : null;
		QueueSummaries queues = new QueueSummaries(admin,
				(shardSummaries != null) ? shardSummaries::totals : admin::counts, engine, gap);
		return new DashboardController(admin, schedules.getIfAvailable(), queues, shardSummaries, access,
				new DashboardPages(dashboard.getRefreshInterval()), path);
	}

	/** Puts the dashboard's mappings below its path. */
	@Bean
	WebMvcConfigurer pgqueueDashboardPath(QueueProperties properties) {
		String path = path(properties.getDashboard());
		return new WebMvcConfigurer() {

			@Override
			public void configurePathMatch(PathMatchConfigurer configurer) {
				configurer.addPathPrefix(path, HandlerTypePredicate.forAssignableType(DashboardController.class));
			}

		};
	}

	private static String path(QueueDashboardProperties dashboard) {
		String path = dashboard.getPath();
		if (path == null || !path.startsWith("/") || path.endsWith("/") || path.contains("{")) {
			throw new IllegalStateException("pgqueue.dashboard.path is '" + path + "': give a path that starts with "
					+ "'/' and does not end with one, such as /pgqueue or /admin/queue");
		}
		return path;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.security.core.context.SecurityContextHolder",
			"org.springframework.security.web.csrf.CsrfToken" })
	static class SpringSecurityAccessConfiguration {

		/** Secured when the application runs Spring Security's filter chain, not merely has its classes. */
		@Bean
		DashboardAccess pgqueueDashboardAccess(QueueProperties properties, ListableBeanFactory beans) {
			if (beans.containsBean(SECURITY_FILTER_CHAIN_BEAN_NAME)) {
				return new SecuredDashboardAccess(properties.getDashboard().getReadRole(),
						properties.getDashboard().getWriteRole(), properties.getDashboard().getShowValues());
			}
			return new OpenDashboardAccess(properties.getDashboard().isAllowWritesWithoutSecurity(),
					properties.getDashboard().getShowValues());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("org.springframework.security.web.csrf.CsrfToken")
	static class OpenAccessConfiguration {

		@Bean
		OpenDashboardAccess pgqueueDashboardAccess(QueueProperties properties) {
			return new OpenDashboardAccess(properties.getDashboard().isAllowWritesWithoutSecurity(),
					properties.getDashboard().getShowValues());
		}

	}

}
