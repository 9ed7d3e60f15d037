package dev.pgqueue.sample.report;

import java.net.URI;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.sample.signup.SignupService;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code POST /reports} queues a monthly report and answers at once with the job's id;
 * {@code GET /reports/{jobId}} shows the report once it is ready.
 */
@RestController
@RequestMapping("/reports")
class ReportController {

	private final JobClient jobClient;

	private final SignupService signups;

	private final JdbcTemplate jdbcTemplate;

	ReportController(JobClient jobClient, SignupService signups, JdbcTemplate jdbcTemplate) {
		this.jobClient = jobClient;
		this.signups = signups;
		this.jdbcTemplate = jdbcTemplate;
	}

	@PostMapping
	ResponseEntity<Map<String, Object>> request(@RequestBody ReportRequest request) {
		if (request.accountId() == null || !this.signups.exists(request.accountId())) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "No account " + request.accountId());
		}
		YearMonth month = YearMonth.now(ZoneOffset.UTC);
		// Without a transaction around it, the job commits at once. Reports are expensive: three
		// attempts at most, whatever the queue's default.
		UUID jobId = this.jobClient.enqueue(JobRequest
			.of(MonthlyReportRequest.KIND, new MonthlyReportRequest(request.accountId(), month))
			.maxAttempts(3));
		return ResponseEntity.accepted()
			.location(URI.create("/reports/" + jobId))
			.body(Map.of("jobId", jobId, "accountId", request.accountId(), "month", month.toString()));
	}

	@GetMapping("/{jobId}")
	Report get(@PathVariable UUID jobId) {
		return this.jdbcTemplate
			.query("SELECT job_id, account_id, month, emails_sent, attempt, generated_at FROM reports WHERE job_id = ?",
					(rs, row) -> new Report(rs.getObject("job_id", UUID.class), rs.getLong("account_id"),
							YearMonth.from(rs.getObject("month", LocalDate.class)), rs.getInt("emails_sent"),
							rs.getInt("attempt"), rs.getObject("generated_at", OffsetDateTime.class)),
					jobId)
			.stream()
			.findFirst()
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND,
					"No report for job " + jobId + " yet; it may still be queued or running"));
	}

	record ReportRequest(Long accountId) {
	}

}
