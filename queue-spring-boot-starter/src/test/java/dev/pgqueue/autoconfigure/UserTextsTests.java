package dev.pgqueue.autoconfigure;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a reader not allowed to see values sees of an error text or a message. */
class UserTextsTests {

	private static final String ERROR = """
			Attempt 3 of 3 was the last: java.lang.IllegalStateException: card 4111 1111 1111 1111 of Ann Smith
			second line of the message: 12 Main Street
				at com.acme.billing.Charges.charge(Charges.java:42)
				at com.acme.billing.ChargeListener.on(ChargeListener.java:17)
			Caused by: java.io.IOException: ann.smith@example.com refused
				at com.acme.mail.Mailer.send(Mailer.java:9)
				... 3 more
				Suppressed: com.acme.Audit$Failure: token abc123
			Lease held by worker-7 expired at 2026-11-29 05:00:00""";

	@Test
	void anErrorKeepsItsClassesAndFramesAndLosesEveryMessage() {
		assertThat(UserTexts.errorText(ERROR, false)).isEqualTo("""
				Attempt 3 of 3 was the last: java.lang.IllegalStateException: ******
				******
					at com.acme.billing.Charges.charge(Charges.java:42)
					at com.acme.billing.ChargeListener.on(ChargeListener.java:17)
				Caused by: java.io.IOException: ******
					at com.acme.mail.Mailer.send(Mailer.java:9)
					... 3 more
					Suppressed: com.acme.Audit$Failure: ******
				******""");
		assertThat(UserTexts.errorText(ERROR, false)).doesNotContain("4111", "Ann", "Main", "example.com", "abc123",
				"worker-7");
	}

	@Test
	void anExceptionWithoutAMessageStaysWhole() {
		assertThat(UserTexts.errorText("java.lang.NullPointerException\n\tat a.B.c(B.java:1)", false))
			.isEqualTo("java.lang.NullPointerException\n\tat a.B.c(B.java:1)");
	}

	@Test
	void aReaderAllowedToSeeValuesSeesThemAsTheyAre() {
		assertThat(UserTexts.errorText(ERROR, true)).isEqualTo(ERROR);
		assertThat(UserTexts.message("42 of 100 invoices for Ann", true)).isEqualTo("42 of 100 invoices for Ann");
		assertThat(UserTexts.message("42 of 100 invoices for Ann", false)).isEqualTo(UserTexts.HIDDEN);
		assertThat(UserTexts.message(null, false)).isNull();
		assertThat(UserTexts.errorText(null, false)).isNull();
	}

}
