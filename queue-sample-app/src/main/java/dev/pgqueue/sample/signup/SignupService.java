package dev.pgqueue.sample.signup;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

import dev.pgqueue.JobClient;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Signs up accounts and reads them back.
 */
@Service
public class SignupService {

	private final JdbcTemplate jdbcTemplate;

	private final JobClient jobClient;

	public SignupService(JdbcTemplate jdbcTemplate, JobClient jobClient) {
		this.jdbcTemplate = jdbcTemplate;
		this.jobClient = jobClient;
	}

	/**
	 * Creates the account and enqueues its welcome email in one transaction: the job is committed
	 * with the account or not at all. There is no window in which an account exists without its
	 * email, or an email is sent for an account that was rolled back.
	 * @throws EmailAlreadyRegisteredException when an account has this email already (nothing is
	 * enqueued)
	 */
	@Transactional
	public Account signUp(String email, String name) {
		long id;
		try {
			id = this.jdbcTemplate.queryForObject("INSERT INTO accounts (email, name) VALUES (?, ?) RETURNING id",
					Long.class, email, name);
		}
		catch (DuplicateKeyException ex) {
			throw new EmailAlreadyRegisteredException(email);
		}
		this.jobClient.enqueue(WelcomeEmail.KIND, new WelcomeEmail(id, email, name));
		return find(id).orElseThrow();
	}

	@Transactional(readOnly = true)
	public Optional<Account> find(long id) {
		List<Account> accounts = this.jdbcTemplate.query("""
				SELECT a.id, a.email, a.name, a.created_at, min(e.sent_at) AS welcome_email_sent_at
				FROM accounts a
				LEFT JOIN sent_emails e ON e.account_id = a.id AND e.kind = ?
				WHERE a.id = ?
				GROUP BY a.id""", (rs, row) -> {
			OffsetDateTime sentAt = rs.getObject("welcome_email_sent_at", OffsetDateTime.class);
			return new Account(rs.getLong("id"), rs.getString("email"), rs.getString("name"),
					rs.getObject("created_at", OffsetDateTime.class), sentAt != null, sentAt);
		}, WelcomeEmail.KIND, id);
		return accounts.stream().findFirst();
	}

	@Transactional(readOnly = true)
	public boolean exists(long id) {
		return Boolean.TRUE.equals(
				this.jdbcTemplate.queryForObject("SELECT EXISTS (SELECT 1 FROM accounts WHERE id = ?)", Boolean.class, id));
	}

}
