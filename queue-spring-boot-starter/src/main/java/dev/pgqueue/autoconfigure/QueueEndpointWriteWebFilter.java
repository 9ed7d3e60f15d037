package dev.pgqueue.autoconfigure;

import java.nio.charset.StandardCharsets;

import dev.pgqueue.autoconfigure.QueueEndpointWriteGuard.Refusal;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * {@link QueueEndpointWriteGuard} in a WebFlux application: the same refusals of the {@code pgqueue}
 * endpoint's writes that a page of another site could send, for requests below the endpoint's path.
 */
final class QueueEndpointWriteWebFilter implements WebFilter, Ordered {

	private final String path;

	/** @param path the endpoint's path within the application, such as {@code /actuator/pgqueue} */
	QueueEndpointWriteWebFilter(String path) {
		this.path = path;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		String within = request.getPath().pathWithinApplication().value();
		if (!within.equals(this.path) && !within.startsWith(this.path + "/")) {
			return chain.filter(exchange);
		}
		HttpHeaders headers = request.getHeaders();
		Refusal refusal = QueueEndpointWriteGuard.refusal(request.getMethod().name(), headers.getFirst("Sec-Fetch-Site"),
				headers.getFirst(HttpHeaders.CONTENT_TYPE));
		if (refusal == null) {
			return chain.filter(exchange);
		}
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(refusal.status());
		response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
		DataBuffer body = response.bufferFactory().wrap(refusal.reason().getBytes(StandardCharsets.UTF_8));
		return response.writeWith(Mono.just(body));
	}

	@Override
	public int getOrder() {
		// Before the application's own filters (security included) see the request.
		return Ordered.HIGHEST_PRECEDENCE + 10;
	}

}
