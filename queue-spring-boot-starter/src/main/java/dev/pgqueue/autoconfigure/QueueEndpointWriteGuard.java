package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.util.Locale;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

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
		String site = request.getHeader("Sec-Fetch-Site");
		if (site != null && !site.equals("same-origin") && !site.equals("none")) {
			response.sendError(HttpStatus.FORBIDDEN.value(), "The pgqueue endpoint takes no write a page of another "
					+ "site sends");
			return;
		}
		if ("POST".equals(request.getMethod()) && !json(request.getContentType())) {
			response.sendError(HttpStatus.UNSUPPORTED_MEDIA_TYPE.value(), "A write to the pgqueue endpoint needs "
					+ "Content-Type: application/json (a body is optional), which a cross-site form cannot send");
			return;
		}
		chain.doFilter(request, response);
	}

	private static boolean json(@org.jspecify.annotations.Nullable String contentType) {
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
