package dev.pgqueue.autoconfigure;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@link QueueEndpoint} over HTTP: one job ({@code GET /actuator/pgqueue/jobs/{id}}) shows its
 * payload, output, error messages and progress message, and a list of jobs their error messages, as
 * they are only to a caller {@code management.endpoint.pgqueue.show-values} allows, judged by the
 * request's {@link SecurityContext} and {@code management.endpoint.pgqueue.roles}; every other
 * operation is the endpoint's own.
 */
@EndpointWebExtension(endpoint = QueueEndpoint.class)
public class QueueEndpointWebExtension {

	private final QueueEndpoint delegate;

	private final Show showValues;

	private final Set<String> roles;

	/**
	 * @param delegate the endpoint
	 * @param showValues when payloads, outputs and messages are shown as they are
	 * @param roles roles one of which a caller needs under {@link Show#WHEN_AUTHORIZED}; empty for
	 * any authenticated caller
	 */
	public QueueEndpointWebExtension(QueueEndpoint delegate, Show showValues, Set<String> roles) {
		this.delegate = delegate;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * Jobs, schedules, kinds or history, as {@link QueueEndpoint#jobs}; the jobs' error messages as
	 * they are only to a caller allowed to see values. 404 for an unknown resource.
	 */
	@ReadOperation
	public WebEndpointResponse<OperationResponseBody> jobs(SecurityContext securityContext, @Selector String resource,
			@Nullable String queue, @Nullable String kind, @Nullable String state, @Nullable String tag,
			@Nullable String error, @Nullable String finishedSince, @Nullable String before, @Nullable Integer limit,
			@Nullable Boolean count, @Nullable Integer hours, @Nullable Integer step) {
		OperationResponseBody body = this.delegate.jobs(resource, queue, kind, state, tag, error, finishedSince, before,
				limit, count, hours, step, this.showValues.isShown(securityContext, this.roles));
		return (body != null) ? new WebEndpointResponse<>(body)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

	/**
	 * One job, its payload with {@code payload=true} and its output with {@code output=true}; one
	 * schedule. 404 when there is none.
	 */
	@ReadOperation
	public WebEndpointResponse<OperationResponseBody> job(SecurityContext securityContext,
			@Selector String resource, @Selector String id, @Nullable Boolean payload, @Nullable Boolean output) {
		boolean showUnsanitized = this.showValues.isShown(securityContext, this.roles);
		OperationResponseBody body = this.delegate.job(resource, id, Boolean.TRUE.equals(payload),
				Boolean.TRUE.equals(output), showUnsanitized);
		return (body != null) ? new WebEndpointResponse<>(body)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

}
