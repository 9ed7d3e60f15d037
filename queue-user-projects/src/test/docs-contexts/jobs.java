// Enqueueing: the JobClient and JobAdmin beans, and what the examples enqueue.
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobState;
import dev.pgqueue.OnConflict;

abstract class Context {

	JobClient jobs;

	JobAdmin jobAdmin;

	long accountId = 42;

	List<JobRequest> requests = List.of();

	DailyReport report = new DailyReport(42);

	Invoice invoice = new Invoice("INV-7", "42");

	ReportRequest request = new ReportRequest(42);

	String tenantId = "42";

	SmsBatch batch = new SmsBatch(List.of("hello"));

	List<Renewal> renewals = List.of();

	Instant midnight = Instant.parse("2026-12-01T00:00:00Z");

}

record ReportRequest(long accountId) {
}

record DailyReport(long accountId) {
}

record SendInvoice(long invoiceId) {
}

record Reindex(long customerId) {
}

record Invoice(String number, String tenantId) {
}

record ResizeImage(String imageId, int width) {
}

record SmsBatch(List<String> messages) {

	int size() {
		return this.messages.size();
	}

}

record Renewal(long subscriptionId) {
}
