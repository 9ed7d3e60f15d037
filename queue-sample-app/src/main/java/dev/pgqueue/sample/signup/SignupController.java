package dev.pgqueue.sample.signup;

import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code POST /signups} creates an account and queues its welcome email; {@code GET /signups/{id}}
 * shows whether the email has been sent.
 */
@RestController
@RequestMapping("/signups")
class SignupController {

	private final SignupService signups;

	SignupController(SignupService signups) {
		this.signups = signups;
	}

	@PostMapping
	ResponseEntity<Account> signUp(@RequestBody SignupRequest request) {
		if (request.email() == null || !request.email().contains("@") || request.name() == null
				|| request.name().isBlank()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "A sign-up needs an email and a name");
		}
		Account account = this.signups.signUp(request.email().trim(), request.name().trim());
		return ResponseEntity.created(URI.create("/signups/" + account.id())).body(account);
	}

	@GetMapping("/{id}")
	Account get(@PathVariable long id) {
		return this.signups.find(id)
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "No account " + id));
	}

	@ExceptionHandler
	ProblemDetail alreadyRegistered(EmailAlreadyRegisteredException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	record SignupRequest(String email, String name) {
	}

}
