package dev.pgqueue.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * A page of jobs, newest first ({@code GET /actuator/pgqueue/jobs}).
 *
 * @param jobs the page's jobs, without payloads
 * @param next the {@code before} of the next page; absent on the last
 * @param matching how many jobs match in all, only with {@code count=true}
 */
public record JobsDescriptor(List<JobDescriptor> jobs, @Nullable String next, @Nullable Long matching)
		implements OperationResponseBody {
}
