package dev.pgqueue.autoconfigure.dashboard;

import java.net.URI;
import java.util.List;
import java.util.Locale;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/** What the dashboard checks of an action's request before its access rules: that its own page sent it. */
final class SameOriginCheck {

	private SameOriginCheck() {
	}

	/**
	 * Refuses an action whose path holds a raw {@code ;} (the name it acts on would be cut short), and
	 * an action a page of another site sent (a cross-site form needs no script and carries the user's
	 * cookies): the browser says where a request comes from in {@code Sec-Fetch-Site}, or,
	 * where it does not send that, in {@code Origin}. A request with neither is not a browser's
	 * cross-site form (a script, curl) and goes on to the access rules.
	 */
	static void check(HttpServletRequest request) {
		if (request.getRequestURI().indexOf(';') >= 0) {
			// The server drops what follows a raw ';' in a segment: the action would reach another name.
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "An action's path holds a raw ';', which would "
					+ "cut the name it acts on short; the dashboard's own forms encode it (%3B)");
		}
		String site = request.getHeader("Sec-Fetch-Site");
		if (site != null) {
			if (!site.equals("same-origin")) {
				throw new ResponseStatusException(HttpStatus.FORBIDDEN, "The pgqueue dashboard acts only on forms of its "
						+ "own pages; this one came from " + site.replaceAll("[^a-z-]", "?"));
			}
			return;
		}
		String origin = request.getHeader("Origin");
		if (origin != null && !sameAuthority(origin, request)) {
			throw new ResponseStatusException(HttpStatus.FORBIDDEN, "The pgqueue dashboard acts only on forms of its "
					+ "own pages; this one came from another origin");
		}
	}

	/** Whether {@code origin} names the host (and port) the request was sent to, or a proxy forwarded. */
	private static boolean sameAuthority(String origin, HttpServletRequest request) {
		URI parsed;
		try {
			parsed = URI.create(origin);
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		if (parsed.getRawAuthority() == null) {
			// "null": a sandboxed frame, a redirect across origins, a file.
			return false;
		}
		String authority = parsed.getRawAuthority().toLowerCase(Locale.ROOT);
		for (String header : List.of("X-Forwarded-Host", "Host")) {
			String host = request.getHeader(header);
			if (host != null && authority.equals(host.split(",")[0].trim().toLowerCase(Locale.ROOT))) {
				return true;
			}
		}
		int port = request.getServerPort();
		boolean defaultPort = (port == 80 && "http".equals(request.getScheme()))
				|| (port == 443 && "https".equals(request.getScheme()));
		String server = request.getServerName() + (defaultPort ? "" : ":" + port);
		return authority.equals(server.toLowerCase(Locale.ROOT));
	}

}
