package dev.pgqueue.autoconfigure;

import java.util.List;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * The kinds this schema knows ({@code GET /actuator/pgqueue/kinds}).
 *
 * @param kinds those pollers handle and schedules enqueue, sorted
 */
public record KindsDescriptor(List<String> kinds) implements OperationResponseBody {
}
