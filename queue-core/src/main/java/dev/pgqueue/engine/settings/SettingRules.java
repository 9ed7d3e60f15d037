package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * The rules settings share, each with one message: what is wrong with the key as written in
 * {@code application.yml}, and what to do.
 */
final class SettingRules {

	private SettingRules() {
	}

	static void atLeastOne(String key, long value) {
		if (value < 1) {
			throw new InvalidQueueConfigurationException(key, key + " must be at least 1, was " + value,
					"Set " + key + " to 1 or more.");
		}
	}

	static void positive(String key, @Nullable Duration value) {
		if (value == null || value.isZero() || value.isNegative()) {
			throw new InvalidQueueConfigurationException(key, key + " must be positive, was " + value,
					"Set " + key + " to a positive duration such as 500ms or 1s.");
		}
	}

	static void notNegative(String key, @Nullable Duration value) {
		if (value == null || value.isNegative()) {
			throw new InvalidQueueConfigurationException(key, key + " must not be negative, was " + value,
					"Set " + key + " to zero or a positive duration such as 1h.");
		}
	}

}
