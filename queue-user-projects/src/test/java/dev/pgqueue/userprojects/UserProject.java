package dev.pgqueue.userprojects;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * An application of a user's own, outside this build: a directory with its own {@code pom.xml} that
 * imports pgqueue's BOM, built by Maven (this repository's wrapper) from the artifacts this build
 * installed into {@code target/it-repo}; anything else it needs comes from the build's own local
 * repository, else Maven Central, as for any user.
 */
final class UserProject {

	static final Path ROOT = Paths.get(property("pgqueue.root"));

	static final String VERSION = property("pgqueue.version");

	static final String SPRING_BOOT_VERSION = property("pgqueue.spring-boot.version");

	private static final Path IT_REPO = Paths.get(property("pgqueue.it-repo"));

	private static final Path LOCAL_REPO = Paths.get(property("pgqueue.local-repo"));

	private static final Path PROJECTS = Paths.get(property("pgqueue.projects"));

	private static final Path WORK = Paths.get(property("pgqueue.work"));

	private final Path dir;

	private UserProject(Path dir) {
		this.dir = dir;
	}

	/** An empty project directory, made anew. */
	static UserProject create(String name) {
		Path dir = WORK.resolve(name);
		try {
			FileSystemUtils.deleteRecursively(dir);
			Files.createDirectories(dir);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return new UserProject(dir);
	}

	/** A copy of one of the projects under {@code src/test/projects}. */
	static UserProject copyOf(String name) {
		UserProject project = create(name);
		try {
			FileSystemUtils.copyRecursively(PROJECTS.resolve(name), project.dir);
			Path pom = project.dir.resolve("pom.xml");
			Files.writeString(pom, Files.readString(pom)
				.replace("@spring-boot.version@", SPRING_BOOT_VERSION)
				.replace("@pgqueue.version@", VERSION));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return project;
	}

	Path dir() {
		return this.dir;
	}

	UserProject write(String path, String content) {
		Path file = this.dir.resolve(path);
		try {
			Files.createDirectories(file.getParent());
			Files.writeString(file, content, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return this;
	}

	/**
	 * Runs Maven on this project as a user would, and fails with the end of its log unless it
	 * succeeds.
	 * @param environment added to (or, with a {@code null} value, removed from) this JVM's
	 * @param arguments goals, properties and options
	 * @return Maven's output
	 */
	String maven(Map<String, String> environment, String... arguments) throws Exception {
		MavenRun run = run(environment, arguments);
		if (run.exitValue() != 0) {
			fail("Maven %s failed on the user's project %s (exit %d); the end of its log (%s):%n%s", List.of(arguments),
					this.dir, run.exitValue(), run.log(), tail(run.output(), 120));
		}
		return run.output();
	}

	/**
	 * Runs Maven on this project as a user would, whatever its outcome.
	 * @param environment added to (or, with a {@code null} value, removed from) this JVM's
	 * @param arguments goals, properties and options
	 * @return Maven's exit value and output
	 */
	MavenRun run(Map<String, String> environment, String... arguments) throws Exception {
		Path settings = writeSettings();
		List<String> command = new ArrayList<>(List.of(ROOT.resolve("mvnw").toString(), "-B", "-ntp", "-f",
				this.dir.resolve("pom.xml").toString(), "-s", settings.toString(),
				"-Dmaven.repo.local=" + IT_REPO));
		command.addAll(List.of(arguments));
		Path log = this.dir.resolve("maven.log");
		ProcessBuilder builder = new ProcessBuilder(command).directory(this.dir.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile());
		builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
		builder.environment().remove("MAVEN_OPTS");
		environment.forEach((name, value) -> {
			if (value == null) {
				builder.environment().remove(name);
			}
			else {
				builder.environment().put(name, value);
			}
		});
		Process process = builder.start();
		if (!process.waitFor(15, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			fail("Maven did not finish %s on %s within 15 minutes; its log: %s", List.of(arguments), this.dir, log);
		}
		return new MavenRun(process.exitValue(), Files.readString(log), log);
	}

	/** What one run of Maven did: its exit value, its output, and the file that holds it. */
	record MavenRun(int exitValue, String output, Path log) {
	}

	/** The one jar {@code spring-boot:repackage} made. */
	Path bootJar() throws IOException {
		try (Stream<Path> jars = Files.list(this.dir.resolve("target"))) {
			List<Path> found = jars.filter((path) -> path.toString().endsWith(".jar")).toList();
			assertThat(found).as("the jar of %s", this.dir).hasSize(1);
			return found.get(0);
		}
	}

	/** Test classes the project's own build ran, from its surefire reports. */
	int testsRun() throws IOException {
		Path reports = this.dir.resolve("target/surefire-reports");
		if (!Files.isDirectory(reports)) {
			return 0;
		}
		int total = 0;
		try (Stream<Path> files = Files.list(reports)) {
			for (Path file : files.filter((path) -> path.getFileName().toString().startsWith("TEST-")).toList()) {
				String xml = Files.readString(file);
				java.util.regex.Matcher tests = java.util.regex.Pattern.compile("<testsuite [^>]*tests=\"(\\d+)\"")
					.matcher(xml);
				if (tests.find()) {
					total += Integer.parseInt(tests.group(1));
				}
			}
		}
		return total;
	}

	private Path writeSettings() throws IOException {
		// The build's own local repository first, as a repository any Maven reads: what this build already
		// downloaded is not downloaded again; the rest comes from Maven Central.
		String local = LOCAL_REPO.toUri().toString();
		String settings = """
				<settings>
				  <profiles>
				    <profile>
				      <id>build-local</id>
				      <repositories>
				        <repository><id>build-local</id><url>%1$s</url><snapshots><enabled>false</enabled></snapshots></repository>
				      </repositories>
				      <pluginRepositories>
				        <pluginRepository><id>build-local</id><url>%1$s</url><snapshots><enabled>false</enabled></snapshots></pluginRepository>
				      </pluginRepositories>
				    </profile>
				  </profiles>
				  <activeProfiles><activeProfile>build-local</activeProfile></activeProfiles>
				</settings>
				""".formatted(local);
		Path file = WORK.resolve("settings.xml");
		Files.createDirectories(WORK);
		Files.writeString(file, settings);
		return file;
	}

	/**
	 * A pom as start.spring.io makes one: Spring Boot's parent at this build's version, Java 17, the
	 * given dependencies (and their management), Spring Boot's plugin.
	 */
	static String bootPom(String artifactId, String dependencies) {
		return """
				<?xml version="1.0" encoding="UTF-8"?>
				<project xmlns="http://maven.apache.org/POM/4.0.0">
				  <modelVersion>4.0.0</modelVersion>
				  <parent>
				    <groupId>org.springframework.boot</groupId>
				    <artifactId>spring-boot-starter-parent</artifactId>
				    <version>%s</version>
				    <relativePath/>
				  </parent>
				  <groupId>com.example</groupId>
				  <artifactId>%s</artifactId>
				  <version>1</version>
				  <properties>
				    <java.version>17</java.version>
				  </properties>
				%s
				  <build>
				    <plugins>
				      <plugin>
				        <groupId>org.springframework.boot</groupId>
				        <artifactId>spring-boot-maven-plugin</artifactId>
				      </plugin>
				    </plugins>
				  </build>
				</project>
				""".formatted(SPRING_BOOT_VERSION, artifactId, dependencies);
	}

	static String tail(String text, int lines) {
		String[] all = text.split("\n");
		return String.join("\n", List.of(all).subList(Math.max(0, all.length - lines), all.length));
	}

	private static String property(String name) {
		String value = System.getProperty(name);
		if (value == null) {
			throw new IllegalStateException("System property " + name + " is not set: run these tests through Maven "
					+ "(./mvnw -B verify -pl queue-user-projects -am), whose failsafe configuration sets it");
		}
		return value;
	}

}
