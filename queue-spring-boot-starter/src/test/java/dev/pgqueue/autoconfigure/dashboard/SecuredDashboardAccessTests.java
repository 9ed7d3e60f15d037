package dev.pgqueue.autoconfigure.dashboard;

import dev.pgqueue.autoconfigure.QueueDashboardProperties.ShowValues;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Who may look at and act in the dashboard behind Spring Security, with and without a read role. */
class SecuredDashboardAccessTests {

	private final MockHttpServletRequest request = new MockHttpServletRequest("GET", "/pgqueue");

	@AfterEach
	void signOut() {
		SecurityContextHolder.clearContext();
	}

	private static void signIn(String name, String... roles) {
		SecurityContextHolder.getContext().setAuthentication(UsernamePasswordAuthenticationToken.authenticated(name,
				"secret", AuthorityUtils.createAuthorityList(java.util.Arrays.stream(roles).map((role) -> "ROLE_" + role)
					.toArray(String[]::new))));
	}

	@Test
	void withoutAReadRoleEverySignedInUserLooksAndOnlyTheWriteRoleActs() {
		SecuredDashboardAccess access = new SecuredDashboardAccess(null, "PGQUEUE_ADMIN", ShowValues.WHEN_AUTHORIZED);
		signIn("viewer", "VIEWER");
		assertThatCode(() -> access.checkRead(this.request)).doesNotThrowAnyException();
		assertThat(access.mayWrite(this.request)).isFalse();
		assertThatExceptionOfType(AccessDeniedException.class).isThrownBy(() -> access.checkWrite(this.request));
	}

	@Test
	void withAReadRoleOnlyItAndTheWriteRoleLook() {
		SecuredDashboardAccess access = new SecuredDashboardAccess("ROLE_PGQUEUE_READER", "PGQUEUE_ADMIN",
				ShowValues.WHEN_AUTHORIZED);
		signIn("someone", "USER");
		assertThatExceptionOfType(AccessDeniedException.class).isThrownBy(() -> access.checkRead(this.request))
			.withMessageContaining("pgqueue.dashboard.read-role");

		signIn("reader", "PGQUEUE_READER");
		assertThatCode(() -> access.checkRead(this.request)).doesNotThrowAnyException();
		assertThat(access.mayWrite(this.request)).isFalse();
		assertThatExceptionOfType(AccessDeniedException.class).isThrownBy(() -> access.checkWrite(this.request));

		signIn("operator", "PGQUEUE_ADMIN");
		assertThatCode(() -> access.checkRead(this.request)).doesNotThrowAnyException();
		assertThatCode(() -> access.checkWrite(this.request)).doesNotThrowAnyException();
		assertThat(access.rules()).contains("users with role PGQUEUE_READER or PGQUEUE_ADMIN may look");
	}

	@Test
	void showsValuesToSignedInUsersWhenAuthorizedOnlyWithAlwaysWithoutSecurityAndNeverWithNever() {
		signIn("viewer", "VIEWER");
		assertThat(new SecuredDashboardAccess(null, "PGQUEUE_ADMIN", ShowValues.WHEN_AUTHORIZED).showsValues(this.request))
			.isTrue();
		assertThat(new SecuredDashboardAccess(null, "PGQUEUE_ADMIN", ShowValues.NEVER).showsValues(this.request)).isFalse();
		SecurityContextHolder.getContext().setAuthentication(new AnonymousAuthenticationToken("key", "anonymous",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")));
		assertThat(new SecuredDashboardAccess(null, "PGQUEUE_ADMIN", ShowValues.WHEN_AUTHORIZED).showsValues(this.request))
			.isFalse();
		assertThat(new OpenDashboardAccess(true, ShowValues.WHEN_AUTHORIZED).showsValues(this.request)).isFalse();
		assertThat(new OpenDashboardAccess(true, ShowValues.ALWAYS).showsValues(this.request)).isTrue();
	}

}
