package dev.pgqueue.autoconfigure.dashboard;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Function;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The dashboard's requests, below {@code pgqueue.dashboard.path} (a prefix the auto-configuration
 * gives this controller's mappings): the pages read through {@link JobAdmin}, and the actions post
 * to it and send the browser back to a page (post, redirect, get). {@link JobAdmin} logs each
 * action with the name its {@link dev.pgqueue.AdminCaller} gives, which with Spring Security is the
 * signed-in user of this request's thread.
 */
@Controller
class DashboardController {

	private static final MediaType HTML = new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8);

	private static final CacheControl ASSET_CACHE = CacheControl.maxAge(Duration.ofHours(1)).cachePrivate();

	private final JobAdmin admin;

	private final QueueSummaries queues;

	private final DashboardAccess access;

	private final DashboardPages pages;

	private final String path;

	DashboardController(JobAdmin admin, QueueSummaries queues, DashboardAccess access, DashboardPages pages,
			String path) {
		this.admin = admin;
		this.queues = queues;
		this.access = access;
		this.pages = pages;
		this.path = path;
	}

	@GetMapping({ "", "/" })
	ResponseEntity<String> overview(@RequestParam(required = false) @Nullable String queue,
			@RequestParam(required = false) @Nullable String kind,
			@RequestParam(required = false) @Nullable String state,
			@RequestParam(required = false) @Nullable String before, HttpServletRequest request) {
		this.access.checkRead(request);
		JobQuery query = query(queue, kind, state, before);
		return html(this.pages.overview(viewer(request), this.queues.read(), query, this.admin.list(query)));
	}

	@GetMapping("/jobs/{id}")
	ResponseEntity<String> job(@PathVariable UUID id, @RequestParam(required = false) @Nullable String did,
			@RequestParam(required = false) @Nullable String outcome, HttpServletRequest request) {
		this.access.checkRead(request);
		JobDetails job = this.admin.find(id).orElse(null);
		if (job == null) {
			return ResponseEntity.status(HttpStatus.NOT_FOUND)
				.contentType(HTML)
				.body(this.pages.notFound(viewer(request), id));
		}
		boolean known = "retry".equals(did) || "cancel".equals(did);
		return html(this.pages.job(viewer(request), job, known ? did : null, outcome(outcome)));
	}

	@PostMapping("/jobs/{id}/retry")
	ResponseEntity<Void> retry(@PathVariable UUID id, HttpServletRequest request) {
		return act(id, "retry", this.admin::retry, request);
	}

	@PostMapping("/jobs/{id}/cancel")
	ResponseEntity<Void> cancel(@PathVariable UUID id, HttpServletRequest request) {
		return act(id, "cancel", this.admin::cancel, request);
	}

	@PostMapping("/queues/{queue}/pause")
	ResponseEntity<Void> pause(@PathVariable String queue, HttpServletRequest request) {
		this.access.checkWrite(request);
		this.admin.pause(queue);
		return seeOther(UriComponentsBuilder.fromPath(base(request)));
	}

	@PostMapping("/queues/{queue}/resume")
	ResponseEntity<Void> resume(@PathVariable String queue, HttpServletRequest request) {
		this.access.checkWrite(request);
		this.admin.resume(queue);
		return seeOther(UriComponentsBuilder.fromPath(base(request)));
	}

	@GetMapping("/dashboard.css")
	ResponseEntity<Resource> stylesheet(HttpServletRequest request) {
		return asset(request, "dashboard.css", MediaType.valueOf("text/css"));
	}

	@GetMapping("/dashboard.js")
	ResponseEntity<Resource> script(HttpServletRequest request) {
		return asset(request, "dashboard.js", MediaType.valueOf("text/javascript"));
	}

	private ResponseEntity<Void> act(UUID id, String action, Function<UUID, AdminResult> operation,
			HttpServletRequest request) {
		this.access.checkWrite(request);
		AdminResult result = operation.apply(id);
		return seeOther(UriComponentsBuilder.fromPath(base(request) + "/jobs/" + id)
			.queryParam("did", action)
			.queryParam("outcome", result.outcome().name().toLowerCase(Locale.ROOT)));
	}

	private ResponseEntity<Resource> asset(HttpServletRequest request, String name, MediaType type) {
		this.access.checkRead(request);
		return ResponseEntity.ok()
			.contentType(type)
			.cacheControl(ASSET_CACHE)
			.body(new ClassPathResource(name, DashboardController.class));
	}

	private DashboardPages.Viewer viewer(HttpServletRequest request) {
		return new DashboardPages.Viewer(base(request), this.access.describe(request), this.access.mayWrite(request),
				this.access.formFields(request));
	}

	private String base(HttpServletRequest request) {
		return request.getContextPath() + this.path;
	}

	private static ResponseEntity<Void> seeOther(UriComponentsBuilder location) {
		return ResponseEntity.status(HttpStatus.SEE_OTHER).location(URI.create(location.build().encode().toUriString()))
			.build();
	}

	private static ResponseEntity<String> html(String body) {
		return ResponseEntity.ok().contentType(HTML).cacheControl(CacheControl.noStore()).body(body);
	}

	private static JobQuery query(@Nullable String queue, @Nullable String kind, @Nullable String state,
			@Nullable String before) {
		try {
			return JobQuery.all()
				.queue(blankToNull(queue))
				.kind(blankToNull(kind))
				.state((blankToNull(state) != null) ? JobState.fromSqlValue(state.trim()) : null)
				.before(blankToNull(before));
		}
		catch (IllegalArgumentException ex) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "Not a job filter the dashboard knows: "
					+ ex.getMessage(), ex);
		}
	}

	private static AdminResult.@Nullable Outcome outcome(@Nullable String outcome) {
		for (AdminResult.Outcome known : AdminResult.Outcome.values()) {
			if (known.name().equalsIgnoreCase(outcome)) {
				return known;
			}
		}
		return null;
	}

	private static @Nullable String blankToNull(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value.trim() : null;
	}

}
