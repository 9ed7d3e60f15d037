package dev.pgqueue.autoconfigure.dashboard;

import java.util.Map;

import dev.pgqueue.autoconfigure.QueueDashboardProperties.ShowValues;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

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
 * the dashboard's path: a signed-in user sees it (with {@code pgqueue.dashboard.read-role}, only one
 * with that role or the write role), a user with the write role acts, and forms carry the CSRF token.
 *
 * <p>Refusals are thrown as {@link AccessDeniedException} so that the filter chain answers them as
 * it answers its own: an anonymous user is sent to sign in, a signed-in one gets 403.
 */
final class SecuredDashboardAccess implements DashboardAccess {

	private final AuthenticationTrustResolver trustResolver = new AuthenticationTrustResolverImpl();

	private final @Nullable String readRole;

	private final String writeRole;

	private final String writeAuthority;

	private final ShowValues showValues;

	/** @param writeRole role that may act, with or without the {@code ROLE_} prefix */
	SecuredDashboardAccess(String writeRole) {
		this(null, writeRole, ShowValues.WHEN_AUTHORIZED);
	}

	/**
	 * @param readRole role that may look, with or without the {@code ROLE_} prefix; {@code null} for
	 * every signed-in user
	 * @param writeRole role that may act (and look), with or without the {@code ROLE_} prefix
	 * @param showValues when messages are shown as they are; {@code when-authorized} shows them to
	 * every user who may look, all of whom are signed in
	 */
	SecuredDashboardAccess(@Nullable String readRole, String writeRole, ShowValues showValues) {
		this.showValues = showValues;
		this.readRole = (readRole != null && !readRole.isBlank()) ? withoutPrefix(readRole.trim()) : null;
		this.writeRole = withoutPrefix(writeRole);
		this.writeAuthority = "ROLE_" + this.writeRole;
	}

	private static String withoutPrefix(String role) {
		return role.startsWith("ROLE_") ? role.substring("ROLE_".length()) : role;
	}

	private static boolean has(Authentication authentication, String authority) {
		return authentication.getAuthorities().stream().anyMatch((granted) -> authority.equals(granted.getAuthority()));
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
		if (this.readRole != null && !has(authentication, "ROLE_" + this.readRole)
				&& !has(authentication, this.writeAuthority)) {
			throw new AccessDeniedException("Looking at the pgqueue dashboard needs role " + this.readRole
					+ " (pgqueue.dashboard.read-role) or " + this.writeRole + " (pgqueue.dashboard.write-role)");
		}
	}

	@Override
	public boolean showsValues(HttpServletRequest request) {
		if (this.showValues != ShowValues.WHEN_AUTHORIZED) {
			return this.showValues == ShowValues.ALWAYS;
		}
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		return authentication != null && this.trustResolver.isAuthenticated(authentication);
	}

	@Override
	public boolean mayWrite(HttpServletRequest request) {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		return this.trustResolver.isAuthenticated(authentication) && has(authentication, this.writeAuthority);
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
		String lookers = (this.readRole != null) ? "users with role " + this.readRole + " or " + this.writeRole
				: "signed-in users";
		return "behind Spring Security; " + lookers + " may look, users with role " + this.writeRole + " may act";
	}

}
