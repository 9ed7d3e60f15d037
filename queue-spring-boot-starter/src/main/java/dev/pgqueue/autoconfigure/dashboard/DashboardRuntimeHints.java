package dev.pgqueue.autoconfigure.dashboard;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Includes the dashboard's style sheet and script in a native image: {@link DashboardController}
 * serves them from the class path, beside itself.
 */
class DashboardRuntimeHints implements RuntimeHintsRegistrar {

	/** Where the assets are, as a resource path. */
	static final String ASSETS = DashboardController.class.getPackageName().replace('.', '/');

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(ASSETS + "/*.css").registerPattern(ASSETS + "/*.js");
	}

}
