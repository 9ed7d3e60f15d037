package dev.pgqueue.autoconfigure.dashboard;

import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AuthenticationTrustResolver;
import org.springframework.security.authentication.AuthenticationTrustResolverImpl;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.web.server.ResponseStatusException;

/**
 * Access with Spring Security, on top of whatever the application's own filter chain demands of
 * the dashboard's path: a signed-in user sees it, a user with the write role acts, and forms carry
 * the CSRF token.
 *
 * <p>Refusals are thrown as {@link AccessDeniedException} so that the filter chain answers them as
 * it answers its own: an anonymous user is sent to sign in, a signed-in one gets 403.
 */
final class SecuredDashboardAccess implements DashboardAccess {

	private final AuthenticationTrustResolver trustResolver = new AuthenticationTrustResolverImpl();

	private final String writeRole;

	private final String writeAuthority;

	/** @param writeRole role that may act, with or without the {@code ROLE_} prefix */
	SecuredDashboardAccess(String writeRole) {
		this.writeRole = writeRole.startsWith("ROLE_") ? writeRole.substring("ROLE_".length()) : writeRole;
		this.writeAuthority = "ROLE_" + this.writeRole;
	}

	@Override
	public void checkRead(HttpServletRequest request) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		if (authentication == null) {
			// A filter chain that ran would have left at least an anonymous authentication.
			throw new ResponseStatusException(HttpStatus.FORBIDDEN, "No Spring Security filter chain covers the "
					+ "pgqueue dashboard at " + request.getRequestURI() + ": let a SecurityFilterChain match its "
					+ "path (pgqueue.dashboard.path)");
		}
		if (!this.trustResolver.isAuthenticated(authentication)) {
			throw new AccessDeniedException("The pgqueue dashboard needs a signed-in user");
		}
	}

	@Override
	public boolean mayWrite(HttpServletRequest request) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		return this.trustResolver.isAuthenticated(authentication) && authentication.getAuthorities()
			.stream()
			.anyMatch((granted) -> this.writeAuthority.equals(granted.getAuthority()));
	}

	@Override
	public void checkWrite(HttpServletRequest request) {
		checkRead(request);
		if (!mayWrite(request)) {
			throw new AccessDeniedException("Acting in the pgqueue dashboard needs role " + this.writeRole
					+ " (pgqueue.dashboard.write-role)");
		}
	}

	@Override
	public Map<String, String> formFields(HttpServletRequest request) {
		CsrfToken token = (CsrfToken) request.getAttribute(CsrfToken.class.getName());
		return (token != null) ? Map.of(token.getParameterName(), token.getToken()) : Map.of();
	}

	@Override
	public String describe(HttpServletRequest request) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		String name = (authentication != null) ? authentication.getName() : "nobody";
		return mayWrite(request) ? "Signed in as " + name
				: "Signed in as " + name + ", read-only: acting needs role " + this.writeRole;
	}

	@Override
	public String rules() {
		return "behind Spring Security; signed-in users may look, users with role " + this.writeRole + " may act";
	}

}
