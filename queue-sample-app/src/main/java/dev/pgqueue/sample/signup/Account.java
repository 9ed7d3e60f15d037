package dev.pgqueue.sample.signup;

import java.time.OffsetDateTime;

/**
 * An account as the API shows it.
 *
 * @param id the account's id
 * @param email where its emails go
 * @param name how to greet it
 * @param signedUpAt when it signed up
 * @param welcomeEmailSent whether the welcome email job has run
 * @param welcomeEmailSentAt when it ran, or {@code null}
 */
public record Account(long id, String email, String name, OffsetDateTime signedUpAt, boolean welcomeEmailSent,
		OffsetDateTime welcomeEmailSentAt) {

}
