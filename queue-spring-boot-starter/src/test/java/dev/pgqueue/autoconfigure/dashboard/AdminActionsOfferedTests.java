package dev.pgqueue.autoconfigure.dashboard;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.JobState;
import dev.pgqueue.autoconfigure.AdminAction;
import dev.pgqueue.autoconfigure.AdminAction.Target;
import dev.pgqueue.autoconfigure.QueueEndpoint;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.http.HttpStatus;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint and the dashboard offer the actions {@link AdminAction} lists, and no other: each
 * surface is asked every name either of them or the dispatcher knows, and a few more, and answers
 * only those the dispatcher lists for it (the dashboard, its share of them).
 */
class AdminActionsOfferedTests {

	/** Names no surface should know, asked so that one a surface handles on its own is seen. */
	private static final List<String> OTHER_NAMES = List.of("requeue", "purge", "discard", "run", "trigger",
			"retry-all", "cancel-all", "delete-all", "drain", "kill");

	private static final List<Target> ONE_TARGETS = List.of(Target.JOB, Target.QUEUE, Target.KIND, Target.SCHEDULE);

	@Test
	void theEndpointHandlesExactlyTheDispatchersActions() {
		for (Target target : ONE_TARGETS) {
			Set<String> handled = new TreeSet<>();
			for (String name : probes()) {
				List<String> calls = new ArrayList<>();
				QueueEndpoint endpoint = new QueueEndpoint(fake(JobAdmin.class, calls), provider(null),
						provider(fake(JobSchedules.class, calls)), true, Show.NEVER);
				String resource = resource(target);
				String subject = (target == Target.JOB) ? UUID.randomUUID().toString() : "emails";
				WebEndpointResponse<?> posted = endpoint.act(resource, subject, name);
				if (!calls.isEmpty() || posted.getStatus() != WebEndpointResponse.STATUS_NOT_FOUND) {
					handled.add(name);
				}
				calls.clear();
				if ("delete".equals(name)) {
					WebEndpointResponse<?> deleted = endpoint.delete(resource, subject);
					if (!calls.isEmpty() || deleted.getStatus() != WebEndpointResponse.STATUS_NOT_FOUND) {
						handled.add(name);
					}
				}
			}
			assertThat(handled).as("the endpoint's actions on %s", target)
				.containsExactlyInAnyOrderElementsOf(AdminAction.names(target, false));
		}
	}

	@Test
	void theDashboardHandlesExactlyTheDispatchersDashboardActions() throws Exception {
		for (Target target : ONE_TARGETS) {
			Set<String> handled = new TreeSet<>();
			for (Method method : DashboardController.class.getDeclaredMethods()) {
				PostMapping mapping = method.getAnnotation(PostMapping.class);
				if (mapping == null) {
					continue;
				}
				for (String path : Stream.concat(Stream.of(mapping.value()), Stream.of(mapping.path())).toList()) {
					String[] segments = path.split("/");
					if (segments.length != 4 || !segments[1].equals(resource(target))) {
						continue;
					}
					String last = segments[3];
					if (!last.startsWith("{")) {
						handled.add(last);
						continue;
					}
					for (String name : probes()) {
						if (dashboardHandles(method, name)) {
							handled.add(name);
						}
					}
				}
			}
			assertThat(handled).as("the dashboard's actions on %s", target)
				.containsExactlyInAnyOrderElementsOf(AdminAction.names(target, true));
		}
		assertThat(Stream.of(JobsSection.Action.values()).map(JobsSection.Action::path))
			.as("the dashboard's actions on every job of a search")
			.containsExactlyInAnyOrderElementsOf(AdminAction.names(Target.MATCHING_JOBS, true));
	}

	@Test
	void theDashboardOffersPartOfWhatTheEndpointOffers() {
		for (Target target : Target.values()) {
			assertThat(AdminAction.names(target, false)).containsAll(AdminAction.names(target, true));
		}
	}

	/** Whether a mapping with an {@code {action}} segment does the action of that name. */
	private static boolean dashboardHandles(Method method, String name) throws Exception {
		List<String> calls = new ArrayList<>();
		DashboardController controller = new DashboardController(fake(JobAdmin.class, calls),
				fake(JobSchedules.class, calls), null, null, new OpenDashboardAccess(true), null, "/pgqueue");
		Parameter[] parameters = method.getParameters();
		Object[] arguments = new Object[parameters.length];
		for (int i = 0; i < parameters.length; i++) {
			Parameter parameter = parameters[i];
			PathVariable variable = parameter.getAnnotation(PathVariable.class);
			if (parameter.getType() == HttpServletRequest.class) {
				arguments[i] = new MockHttpServletRequest("POST", "/pgqueue");
			}
			else if (parameter.getType() == UUID.class) {
				arguments[i] = UUID.randomUUID();
			}
			else if (variable != null && "action".equals(variable.value().isEmpty() ? parameter.getName() : variable.value())) {
				arguments[i] = name;
			}
			else {
				arguments[i] = "emails";
			}
		}
		method.setAccessible(true);
		try {
			method.invoke(controller, arguments);
		}
		catch (InvocationTargetException ex) {
			if (ex.getCause() instanceof ResponseStatusException refused
					&& refused.getStatusCode() == HttpStatus.NOT_FOUND) {
				return false;
			}
			throw ex;
		}
		return !calls.isEmpty();
	}

	private static Set<String> probes() {
		Set<String> names = new LinkedHashSet<>(OTHER_NAMES);
		Stream.of(AdminAction.values()).map(AdminAction::actionName).forEach(names::add);
		return names;
	}

	private static String resource(Target target) {
		return switch (target) {
			case JOB, MATCHING_JOBS -> "jobs";
			case QUEUE -> "queues";
			case KIND -> "kinds";
			case SCHEDULE -> "schedules";
		};
	}

	/** An admin or schedules that notes each call and answers as if it found nothing to change. */
	@SuppressWarnings("unchecked")
	private static <T> T fake(Class<T> type, List<String> calls) {
		return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type }, (proxy, method, args) -> {
			if (method.getDeclaringClass() == Object.class) {
				return switch (method.getName()) {
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					default -> type.getSimpleName();
				};
			}
			calls.add(method.getName());
			Class<?> returned = method.getReturnType();
			if (returned == boolean.class) {
				return false;
			}
			if (returned == int.class) {
				return 0;
			}
			if (returned == long.class) {
				return 0L;
			}
			if (returned == Optional.class) {
				return Optional.empty();
			}
			if (returned == List.class) {
				return List.of();
			}
			if (returned == AdminResult.class) {
				return new AdminResult((UUID) args[0], AdminResult.Outcome.NOT_FOUND, (JobState) null);
			}
			if (returned == UUID.class) {
				return UUID.randomUUID();
			}
			return null;
		});
	}

	private static <T> ObjectProvider<T> provider(T value) {
		return new ObjectProvider<>() {

			@Override
			public T getIfAvailable() {
				return value;
			}

		};
	}

}
