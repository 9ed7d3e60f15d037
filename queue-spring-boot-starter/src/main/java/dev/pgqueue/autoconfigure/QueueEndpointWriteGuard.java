package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.util.Locale;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses a write to the {@code pgqueue} endpoint that a page of another site could have sent. Its
 * writes on one job, queue or schedule carry everything in their path, so nothing in a request tells
 * an operator's {@code curl} from a cross-site form or a {@code no-cors} fetch, which a browser sends
 * with the user's cookies and without asking the server first: a write must therefore carry a JSON
 * content type, which such requests cannot, and a browser that says the page sending it is of another
 * origin ({@code Sec-Fetch-Site}) is refused whatever it carries.
 */
final class QueueEndpointWriteGuard extends OncePerRequestFilter {

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !"POST".equals(request.getMethod()) && !"DELETE".equals(request.getMethod());
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		Refusal refusal = refusal(request.getMethod(), request.getHeader("Sec-Fetch-Site"), request.getContentType());
		if (refusal != null) {
			response.sendError(refusal.status().value(), refusal.reason());
			return;
		}
		chain.doFilter(request, response);
	}

	/**
	 * Why a request to the endpoint is refused, or {@code null} when it is not: the rule of the servlet
	 * filter and of the WebFlux filter ({@link QueueEndpointWriteWebFilter}) alike.
	 * @param method the request's method
	 * @param site its {@code Sec-Fetch-Site} header
	 * @param contentType its {@code Content-Type} header
	 */
	static @Nullable Refusal refusal(String method, @Nullable String site, @Nullable String contentType) {
		if (!"POST".equals(method) && !"DELETE".equals(method)) {
			return null;
		}
		if (site != null && !site.equals("same-origin") && !site.equals("none")) {
			return new Refusal(HttpStatus.FORBIDDEN, "The pgqueue endpoint takes no write a page of another site sends");
		}
		if ("POST".equals(method) && !json(contentType)) {
			return new Refusal(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "A write to the pgqueue endpoint needs "
					+ "Content-Type: application/json (a body is optional), which a cross-site form cannot send");
		}
		return null;
	}

	/** A refused request's answer. */
	record Refusal(HttpStatus status, String reason) {
	}

	private static boolean json(@Nullable String contentType) {
		if (contentType == null) {
			return false;
		}
		try {
			MediaType type = MediaType.parseMediaType(contentType);
			String subtype = type.getSubtype().toLowerCase(Locale.ROOT);
			return "application".equalsIgnoreCase(type.getType()) && (subtype.equals("json") || subtype.endsWith("+json"));
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

}
