package dev.pgqueue.schema;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.flywaydb.core.api.Location;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.resource.LoadableResource;
import org.flywaydb.core.internal.resource.classpath.ClassPathResource;
import org.jspecify.annotations.Nullable;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * pgqueue's migrations for Flyway in a native image, where Flyway cannot list the resources of a
 * class path location itself (it finds none and would migrate nothing): Spring lists the files under
 * {@link QueueMigrator#LOCATION}, which {@link QueueSchemaRuntimeHints} includes in the image, and
 * Flyway reads each as it reads any class path resource. Spring Boot does the same for the
 * application's own locations, not for this one.
 */
class NativeImageMigrations implements ResourceProvider {

	private final ClassLoader classLoader;

	private final Location location = new Location(QueueMigrator.LOCATION);

	/** The file names under the location, read once. */
	private final Set<String> fileNames;

	NativeImageMigrations(ClassLoader classLoader) {
		this.classLoader = classLoader;
		this.fileNames = list(classLoader);
	}

	private static Set<String> list(ClassLoader classLoader) {
		Set<String> names = new TreeSet<>();
		try {
			for (Resource resource : new PathMatchingResourcePatternResolver(classLoader)
				.getResources("classpath*:" + QueueSchemaRuntimeHints.MIGRATIONS + "/*")) {
				if (resource.getFilename() != null && resource.isReadable()) {
					names.add(resource.getFilename());
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not list pgqueue's migrations under " + QueueMigrator.LOCATION, ex);
		}
		return names;
	}

	/** A resource by its path relative to the location, such as the {@code .conf} file of a script. */
	@Override
	public @Nullable LoadableResource getResource(String name) {
		return this.fileNames.contains(name) ? resource(name) : null;
	}

	@Override
	public Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
		List<LoadableResource> resources = new ArrayList<>();
		for (String name : this.fileNames) {
			if (name.startsWith(prefix) && endsWithAny(name, suffixes)) {
				resources.add(resource(name));
			}
		}
		return resources;
	}

	private LoadableResource resource(String name) {
		return new ClassPathResource(this.location, this.location.getPath() + "/" + name, this.classLoader,
				StandardCharsets.UTF_8);
	}

	private static boolean endsWithAny(String name, String[] suffixes) {
		for (String suffix : suffixes) {
			if (name.endsWith(suffix)) {
				return true;
			}
		}
		return false;
	}

}
