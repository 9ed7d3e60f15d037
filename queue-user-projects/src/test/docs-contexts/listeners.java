// Listener methods, beans around them, and the services they call.
import java.time.Duration;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.util.Optional;
import java.util.UUID;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.Job;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobContext;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobSnoozedException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.jdbc.core.JdbcTemplate;

abstract class Context {

	static final ZoneId PARIS = ZoneId.of("Europe/Paris");

	JdbcTemplate jdbc;

	JobAdmin jobAdmin;

	UUID id;

	Ledger ledger;

	Billing billing;

	PaymentClient payments;

	Alerts alerts;

	int pages = 12;

	void render(int page) {
	}

}

record ReportRequest(long accountId, YearMonth month) {
}

record ReportOptions(String format) {
}

record ThumbnailRequest(String reportId) {
}

record InvoiceRequest(String number) {
}

record InvoiceTotal(String number, long cents) {
}

record Capture(long orderId, long amount) {
}

record Refund(long paymentId, long amount) {
}

interface Ledger {

	boolean isClosed(YearMonth month);

}

interface Billing {

	long total(InvoiceRequest request);

}

interface PaymentClient {

	void capture(long amount, String idempotencyKey);

	Optional<String> findByIdempotencyKey(String idempotencyKey);

}

interface Alerts {

	void send(String message);

}

interface Tenants {

	void enter(String tenant);

	void leave();

}
