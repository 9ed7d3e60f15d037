package dev.pgqueue.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the {@code pgqueue} Actuator endpoint ({@link QueueEndpoint}), beside
 * Spring Boot's own {@code access} and {@code cache.time-to-live}.
 */
@ConfigurationProperties("management.endpoint.pgqueue")
public class QueueEndpointProperties {

	/**
	 * When to show jobs' payloads and outputs as they are, to a caller who asks for them
	 * (payload=true, output=true); others see them masked.
	 */
	private Show showValues = Show.NEVER;

	/**
	 * Roles used to determine whether a user is authorized to see payloads and outputs when
	 * show-values is when-authorized. When empty, all authenticated users are authorized.
	 */
	private final Set<String> roles = new LinkedHashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

}
