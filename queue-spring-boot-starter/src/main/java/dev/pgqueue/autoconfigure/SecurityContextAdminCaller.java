package dev.pgqueue.autoconfigure;

import dev.pgqueue.AdminCaller;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * Names the caller of a {@link dev.pgqueue.JobAdmin} operation by the authentication of the
 * current thread's security context (the user of an Actuator request, say); {@code unknown} when
 * there is none.
 */
final class SecurityContextAdminCaller implements AdminCaller {

	@Override
	public String name() {
		Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
		String name = (authentication != null) ? authentication.getName() : null;
		return (name != null && !name.isBlank()) ? name : "unknown";
	}

}
