package dev.pgqueue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules that keep pgqueue's public surface small, checked on every build: the packages are
 * layered one way, the API ({@code dev.pgqueue}) needs nothing else of pgqueue, the engine stays out
 * of the users' Javadoc, and an engine type that nothing outside its package uses is not public.
 *
 * <p>Why rules rather than a JPMS module descriptor that exports only the API: Spring Boot
 * applications run on the class path, where a {@code module-info.java} is ignored and every public
 * type is reachable whatever it says; and pgqueue's dependencies (Spring, Jackson 3, Flyway) are
 * automatic modules, whose names a descriptor would have to depend on. A descriptor would cost a
 * module path in every build and hide nothing from the applications that use pgqueue. These rules
 * instead keep what the engine's packages share (types public only so that another engine package
 * can use them) from growing, and keep it out of the users' documentation.
 */
class ArchitectureTests {

	/** Where queue-core's main classes were compiled: {@code queue-core/target/classes}. */
	private static final Path MAIN_CLASSES = locationOf(Job.class);

	/** Where queue-core's test classes were compiled. */
	private static final Path TEST_CLASSES = locationOf(ArchitectureTests.class);

	/** The project's root, with every module's sources. */
	private static final Path ROOT = MAIN_CLASSES.getParent().getParent().getParent();

	/** queue-core's main code. */
	private static final JavaClasses MAIN = new ClassFileImporter().importPath(MAIN_CLASSES);

	/** queue-core's main code and its tests, which use engine types from other packages too. */
	private static final JavaClasses MAIN_AND_TESTS = new ClassFileImporter().importPaths(MAIN_CLASSES, TEST_CLASSES);

	/**
	 * The engine's types that the modules a user depends on (the starter, the test kit, Modulith's
	 * bridge, the embedded server) may name: the engine as they assemble and run it, its settings and
	 * its read model. Every other engine type is public only for the engine's own packages (Java has no
	 * visibility between a package and its sub-packages), left out of the Javadoc, and may change in
	 * any release; a shipped module that needs one more type adds it here, on purpose.
	 */
	private static final Set<String> PUBLISHED_ENGINE_TYPES = Set.of(
			// The engine, its assembly and one database's part of it.
			"dev.pgqueue.engine.QueueEngine", "dev.pgqueue.engine.QueueEngineBuilder",
			"dev.pgqueue.engine.DatabaseEngine",
			// What it is built from.
			"dev.pgqueue.engine.settings.EngineSettings", "dev.pgqueue.engine.settings.QueueSettings",
			"dev.pgqueue.engine.settings.QueueCatalog", "dev.pgqueue.engine.settings.RateLimit",
			"dev.pgqueue.engine.settings.MaintenanceSettings", "dev.pgqueue.engine.settings.TwoPhaseSettings",
			"dev.pgqueue.engine.settings.ScheduleSettings", "dev.pgqueue.engine.settings.HistorySettings",
			"dev.pgqueue.engine.settings.WorkerSettings", "dev.pgqueue.engine.settings.KindSettings",
			"dev.pgqueue.engine.settings.KeyFairness", "dev.pgqueue.engine.settings.ConcurrencyLimits",
			"dev.pgqueue.engine.job.JobHandlerRegistry", "dev.pgqueue.listener.JobListenerMethodProcessor",
			// The read model, and what its records carry.
			"dev.pgqueue.engine.status.EngineStatus", "dev.pgqueue.engine.status.DatabaseStatus",
			"dev.pgqueue.engine.status.QueueStatus", "dev.pgqueue.engine.sql.MaintenanceRepository",
			"dev.pgqueue.engine.maintenance.TransactionHorizon", "dev.pgqueue.engine.shards.ShardWatch",
			"dev.pgqueue.engine.shards.ShardLayout",
			// What the test kit's runs on the calling thread answer.
			"dev.pgqueue.engine.run.Attempt");

	/** The modules a user's application depends on, whose sources may name only published engine types. */
	private static final List<String> SHIPPED_MODULES = List.of("queue-spring-boot-starter", "queue-test-kit",
			"queue-modulith", "queue-embedded-postgres");

	@Test
	void no_two_packages_of_pgqueue_depend_on_each_other_even_through_others() {
		slices().assignedFrom(BY_PACKAGE).should().beFreeOfCycles().check(MAIN);
	}

	/**
	 * Loops of files inside a package that stay for now, each for a reason: the builder idiom
	 * ({@code QueueEngine.builder()} hands out what builds the engine); the bucket coordinator serving the
	 * scope that holds it; Micrometer's documented-observation idiom (the enum names its default
	 * conventions, which use its key names). A new loop fails the build; one of these that goes away
	 * fails it too, until it leaves the list.
	 */
	private static final List<List<String>> KNOWN_FILE_LOOPS = List.of(
			List.of("dev.pgqueue.engine.QueueEngine", "dev.pgqueue.engine.QueueEngineBuilder"),
			List.of("dev.pgqueue.engine.buckets.BucketCoordinator", "dev.pgqueue.engine.buckets.BucketScope"),
			List.of("dev.pgqueue.observation.DefaultEnqueueObservationConvention",
					"dev.pgqueue.observation.DefaultJobProcessingObservationConvention",
					"dev.pgqueue.observation.QueueObservation"));

	@Test
	void each_package_is_used_only_by_the_layers_above_it() {
		layeredArchitecture().consideringOnlyDependenciesInLayers()
			.layer("api").definedBy("dev.pgqueue")
			.layer("metrics").definedBy("dev.pgqueue.metrics..")
			.layer("observation").definedBy("dev.pgqueue.observation..")
			.layer("schema").definedBy("dev.pgqueue.schema..")
			.layer("settings").definedBy("dev.pgqueue.engine.settings..")
			.layer("job").definedBy("dev.pgqueue.engine.job..")
			.layer("sql").definedBy("dev.pgqueue.engine.sql..")
			.layer("control").definedBy("dev.pgqueue.engine.control..")
			.layer("limits").definedBy("dev.pgqueue.engine.limits..")
			.layer("run").definedBy("dev.pgqueue.engine.run..")
			.layer("poll").definedBy("dev.pgqueue.engine.poll..")
			.layer("transactional").definedBy("dev.pgqueue.engine.transactional..")
			.layer("leased").definedBy("dev.pgqueue.engine.leased..")
			.layer("buckets").definedBy("dev.pgqueue.engine.buckets..")
			.layer("twophase").definedBy("dev.pgqueue.engine.twophase..")
			.layer("service").definedBy("dev.pgqueue.engine.service..")
			.layer("maintenance").definedBy("dev.pgqueue.engine.maintenance..")
			.layer("schedules").definedBy("dev.pgqueue.engine.schedules..")
			.layer("shards").definedBy("dev.pgqueue.engine.shards..")
			.layer("status").definedBy("dev.pgqueue.engine.status..")
			.layer("engine").definedBy("dev.pgqueue.engine")
			.layer("listener").definedBy("dev.pgqueue.listener..")
			// What users touch needs nothing else of pgqueue; every layer may use it.
			.whereLayer("api").mayNotAccessAnyLayer()
			// What the engine reports, its traces, and its table: used by the engine, using none of it.
			.whereLayer("metrics").mayOnlyAccessLayers("api")
			.whereLayer("observation").mayOnlyAccessLayers("api")
			.whereLayer("schema").mayOnlyAccessLayers("api")
			// How every long-running part starts, stops and names its threads.
			.whereLayer("service").mayNotAccessAnyLayer()
			.whereLayer("service").mayOnlyBeAccessedByLayers("settings", "control", "run", "poll", "transactional", "leased",
					"limits", "buckets", "twophase", "maintenance", "schedules", "shards", "status", "engine")
			// The engine's vocabulary: settings, and jobs as the engine passes them around.
			.whereLayer("settings").mayOnlyBeAccessedByLayers("job", "sql", "run", "poll", "transactional", "leased",
					"limits", "buckets", "twophase", "maintenance", "schedules", "status", "engine", "listener")
			.whereLayer("job").mayOnlyBeAccessedByLayers("sql", "control", "limits", "run", "poll", "transactional",
					"leased", "buckets", "twophase", "maintenance", "schedules", "engine", "listener")
			.whereLayer("sql").mayOnlyBeAccessedByLayers("control", "limits", "run", "poll", "transactional", "leased",
					"buckets", "twophase", "maintenance", "schedules", "status", "engine")
			// Cancellation and progress of the attempts running here: the runner registers each, the assembly
			// hands it the operators' requests.
			.whereLayer("control").mayOnlyBeAccessedByLayers("run", "engine")
			// What a claim may take (concurrency and rate limits, fairness), which every mode's claims go through.
			.whereLayer("limits").mayOnlyBeAccessedByLayers("poll", "transactional", "leased", "twophase", "maintenance",
					"status", "engine")
			.whereLayer("run").mayOnlyBeAccessedByLayers("poll", "transactional", "leased", "limits", "buckets",
					"twophase", "maintenance", "engine")
			.whereLayer("poll").mayOnlyBeAccessedByLayers("transactional", "leased", "limits", "buckets",
					"twophase", "maintenance", "status", "engine")
			// The claim strategies know nothing of each other, except that two-phase runs transactional batches.
			.whereLayer("transactional").mayOnlyBeAccessedByLayers("twophase", "maintenance", "engine")
			.whereLayer("leased").mayOnlyBeAccessedByLayers("maintenance", "engine")
			.whereLayer("buckets").mayOnlyBeAccessedByLayers("maintenance", "schedules", "status", "engine")
			.whereLayer("twophase").mayOnlyBeAccessedByLayers("maintenance", "status", "engine")
			.whereLayer("maintenance").mayOnlyBeAccessedByLayers("status", "engine")
			.whereLayer("schedules").mayOnlyBeAccessedByLayers("engine")
			// Where a key's jobs live across servers, and which servers answer: configuration in, a shard's name out.
			.whereLayer("shards").mayOnlyAccessLayers("api", "service")
			.whereLayer("shards").mayOnlyBeAccessedByLayers("engine")
			// The read model: one snapshot of the parts above, which the starter's readers read instead of them.
			.whereLayer("status").mayOnlyBeAccessedByLayers("engine")
			// The clients, the admin and the assembly, and the @JobListener adapter: used by the starter only.
			.whereLayer("engine").mayNotBeAccessedByAnyLayer()
			.whereLayer("listener").mayNotBeAccessedByAnyLayer()
			.whereLayer("listener").mayOnlyAccessLayers("api", "job", "settings")
			.ensureAllClassesAreContainedInArchitecture()
			.check(MAIN);
	}

	/**
	 * Inside a package, files depend on each other one way too: a loop of files (A uses B, B uses A,
	 * directly or through others of the package) is one file split in two, or a part that belongs
	 * elsewhere. A nested class counts as its file's.
	 */
	@Test
	void no_two_files_of_a_package_depend_on_each_other_even_through_others() {
		List<List<String>> loops = new ArrayList<>(fileCycles(MAIN));
		loops.removeAll(KNOWN_FILE_LOOPS);
		assertThat(loops).as("loops of files inside a package").isEmpty();
	}

	@Test
	void the_known_loops_of_files_are_still_there() {
		assertThat(fileCycles(MAIN)).as("the loops left for later; remove from the list those that are gone")
			.containsAll(KNOWN_FILE_LOOPS);
	}

	@Test
	void a_loop_of_files_is_found() {
		JavaClasses loop = new ClassFileImporter().importClasses(LoopOne.class, LoopTwo.class, ArchitectureTests.class);
		assertThat(fileCycles(loop)).containsExactly(List.of(LoopOne.class.getName(), LoopTwo.class.getName()));
	}

	/** Each loop of top-level classes inside one package, its members in name order. */
	static List<List<String>> fileCycles(JavaClasses classes) {
		Map<String, Set<String>> uses = new TreeMap<>();
		for (JavaClass origin : classes) {
			JavaClass from = topLevel(origin);
			Set<String> targets = uses.computeIfAbsent(from.getName(), (name) -> new TreeSet<>());
			for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
				JavaClass to = topLevel(dependency.getTargetClass().getBaseComponentType());
				if (to.getPackageName().equals(from.getPackageName()) && !to.getName().equals(from.getName())
						&& classes.contain(to.getName())) {
					targets.add(to.getName());
				}
			}
		}
		List<List<String>> loops = new ArrayList<>();
		for (Set<String> component : stronglyConnected(uses)) {
			if (component.size() > 1) {
				loops.add(List.copyOf(component));
			}
		}
		return loops;
	}

	/** Tarjan's strongly connected components of a graph given as each node's successors. */
	private static List<Set<String>> stronglyConnected(Map<String, Set<String>> graph) {
		Map<String, Integer> index = new HashMap<>();
		Map<String, Integer> lowLink = new HashMap<>();
		Deque<String> stack = new ArrayDeque<>();
		Set<String> onStack = new HashSet<>();
		List<Set<String>> components = new ArrayList<>();
		int[] next = { 0 };
		for (String node : graph.keySet()) {
			if (!index.containsKey(node)) {
				connect(node, graph, index, lowLink, stack, onStack, components, next);
			}
		}
		return components;
	}

	private static void connect(String node, Map<String, Set<String>> graph, Map<String, Integer> index,
			Map<String, Integer> lowLink, Deque<String> stack, Set<String> onStack, List<Set<String>> components,
			int[] next) {
		index.put(node, next[0]);
		lowLink.put(node, next[0]);
		next[0]++;
		stack.push(node);
		onStack.add(node);
		for (String successor : graph.getOrDefault(node, Set.of())) {
			if (!index.containsKey(successor)) {
				connect(successor, graph, index, lowLink, stack, onStack, components, next);
				lowLink.put(node, Math.min(lowLink.get(node), lowLink.get(successor)));
			}
			else if (onStack.contains(successor)) {
				lowLink.put(node, Math.min(lowLink.get(node), index.get(successor)));
			}
		}
		if (lowLink.get(node).equals(index.get(node))) {
			Set<String> component = new TreeSet<>();
			String member;
			do {
				member = stack.pop();
				onStack.remove(member);
				component.add(member);
			}
			while (!member.equals(node));
			components.add(component);
		}
	}

	@Test
	void the_api_depends_on_no_other_package_of_pgqueue() {
		noClasses().that().resideInAPackage("dev.pgqueue")
			.should().dependOnClassesThat(resideInAPackage("dev.pgqueue..")
				.and(DescribedPredicate.not(resideInAPackage("dev.pgqueue")))
				.as("reside in another package of pgqueue"))
			.check(MAIN);
	}

	@Test
	void metrics_observation_and_schema_depend_on_nothing_of_the_engine() {
		noClasses().that().resideInAnyPackage("dev.pgqueue.metrics..", "dev.pgqueue.observation..",
				"dev.pgqueue.schema..")
			.should().dependOnClassesThat().resideInAnyPackage("dev.pgqueue.engine..", "dev.pgqueue.listener..")
			.check(MAIN);
	}

	@Test
	void engine_packages_are_left_out_of_the_users_javadoc() throws Exception {
		Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(ROOT.resolve("pom.xml").toFile());
		String excluded = XPathFactory.newInstance().newXPath().evaluate("/project/build/pluginManagement/plugins/"
				+ "plugin[artifactId='maven-javadoc-plugin']/configuration/excludePackageNames", pom).trim();
		List<Pattern> patterns = Stream.of(excluded.split("[:,;]"))
			.map(String::trim)
			.filter((name) -> !name.isEmpty())
			.map((name) -> Pattern.compile(Pattern.quote(name).replace("*", "\\E.*\\Q")))
			.toList();
		assertThat(patterns).as("excludePackageNames of maven-javadoc-plugin in the parent pom").isNotEmpty();
		for (String pkg : packagesOf(MAIN)) {
			boolean left = patterns.stream().anyMatch((pattern) -> pattern.matcher(pkg).matches());
			assertThat(left).as("package %s left out of the Javadoc by '%s'", pkg, excluded)
				.isEqualTo(pkg.equals("dev.pgqueue.engine") || pkg.startsWith("dev.pgqueue.engine."));
		}
	}

	@Test
	void engine_types_that_nothing_outside_their_package_uses_are_not_public() {
		Set<String> needlesslyPublic = publicTypesUsedOnlyInTheirPackage();
		assertThat(needlesslyPublic).as("public engine types that nothing outside their package uses (in queue-core, "
				+ "its tests or another module's sources): make them package-private").isEmpty();
	}

	@Test
	void shipped_modules_name_only_the_published_engine_types() {
		Map<String, Set<String>> named = engineTypesNamedByShippedModules();
		Map<String, Set<String>> unpublished = new TreeMap<>(named);
		unpublished.keySet().removeAll(PUBLISHED_ENGINE_TYPES);
		assertThat(unpublished)
			.as("engine types that shipped modules name but the engine does not publish, with the files that name "
					+ "them: read what you need from the status, the settings or the engine itself, or publish the "
					+ "type on purpose in PUBLISHED_ENGINE_TYPES")
			.isEmpty();
	}

	@Test
	void every_published_engine_type_is_named_by_a_shipped_module() {
		Set<String> unused = new TreeSet<>(PUBLISHED_ENGINE_TYPES);
		unused.removeAll(engineTypesNamedByShippedModules().keySet());
		assertThat(unused).as("published engine types that no shipped module names any more: take them off the list")
			.isEmpty();
	}

	@Test
	void a_shipped_module_naming_an_unpublished_engine_type_is_found() {
		String source = "package dev.pgqueue.autoconfigure;\n\nimport dev.pgqueue.engine.poll.JobPoller;\n"
				+ "import dev.pgqueue.engine.status.QueueStatus.PollerStatus;\n\nclass Reader { dev.pgqueue.engine.sql.JobRepository jobs; }\n";
		assertThat(engineTypesNamedIn(source)).containsExactlyInAnyOrder("dev.pgqueue.engine.poll.JobPoller",
				"dev.pgqueue.engine.status.QueueStatus", "dev.pgqueue.engine.sql.JobRepository");
	}

	/** The engine's top-level types each shipped module's main sources name, with the files that name them. */
	private static Map<String, Set<String>> engineTypesNamedByShippedModules() {
		Map<String, Set<String>> named = new TreeMap<>();
		for (String module : SHIPPED_MODULES) {
			Path main = ROOT.resolve(module).resolve("src/main/java");
			assertThat(main).as("main sources of shipped module %s", module).isDirectory();
			try (Stream<Path> files = Files.walk(main)) {
				for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
					for (String type : engineTypesNamedIn(read(file))) {
						named.computeIfAbsent(type, (key) -> new TreeSet<>()).add(ROOT.relativize(file).toString());
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return named;
	}

	private static final Pattern ENGINE_TYPE = Pattern
		.compile("dev\\.pgqueue\\.(?:engine|listener)(?:\\.[a-z][a-z0-9]*)*\\.[A-Z]\\w*");

	/** The top-level engine types a source names, fully qualified or by import (a nested type counts as its outer one). */
	private static Set<String> engineTypesNamedIn(String source) {
		Set<String> types = new TreeSet<>();
		Matcher matcher = ENGINE_TYPE.matcher(source);
		while (matcher.find()) {
			types.add(matcher.group());
		}
		return types;
	}

	/**
	 * Public top-level types of the engine's packages (and the listener adapter's) that no class of
	 * another package uses: none in queue-core's main code or tests (by their bytecode), and none in
	 * the sources of the other modules, which name each such type they use (imported, fully qualified,
	 * or under a wildcard import).
	 */
	private static Set<String> publicTypesUsedOnlyInTheirPackage() {
		Set<String> usedOutside = new TreeSet<>();
		for (JavaClass origin : MAIN_AND_TESTS) {
			for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
				JavaClass target = topLevel(dependency.getTargetClass().getBaseComponentType());
				if (!target.getPackageName().equals(origin.getPackageName())) {
					usedOutside.add(target.getName());
				}
			}
		}
		Set<String> candidates = new TreeSet<>();
		for (JavaClass type : MAIN) {
			if (type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC)
					&& (type.getPackageName().startsWith("dev.pgqueue.engine")
							|| type.getPackageName().startsWith("dev.pgqueue.listener"))) {
				candidates.add(type.getName());
			}
		}
		usedOutside.addAll(namedInOtherModules(candidates));
		candidates.removeAll(usedOutside);
		return candidates;
	}

	private static JavaClass topLevel(JavaClass type) {
		JavaClass current = type;
		while (current.getEnclosingClass().isPresent()) {
			current = current.getEnclosingClass().get();
		}
		return current;
	}

	private static final Pattern QUALIFIED_NAME = Pattern.compile("dev\\.pgqueue(?:\\.[a-z][a-z0-9]*)+\\.[A-Z]\\w*");

	private static final Pattern WILDCARD_IMPORT = Pattern.compile("import\\s+(dev\\.pgqueue[a-z0-9.]*)\\.\\*\\s*;");

	/** Which of the types the sources of the other modules (main and test) name. */
	private static Set<String> namedInOtherModules(Set<String> types) {
		Set<String> named = new TreeSet<>();
		for (Path source : otherModulesSources()) {
			String text = read(source);
			Matcher qualified = QUALIFIED_NAME.matcher(text);
			while (qualified.find()) {
				named.add(qualified.group());
			}
			Matcher wildcard = WILDCARD_IMPORT.matcher(text);
			while (wildcard.find()) {
				String pkg = wildcard.group(1);
				for (String type : types) {
					String simpleName = type.substring(type.lastIndexOf('.') + 1);
					if (type.equals(pkg + "." + simpleName) && Pattern.compile("\\b" + simpleName + "\\b").matcher(text).find()) {
						named.add(type);
					}
				}
			}
		}
		return named;
	}

	private static List<Path> otherModulesSources() {
		List<Path> sources = new ArrayList<>();
		try (Stream<Path> modules = Files.list(ROOT)) {
			for (Path module : modules.filter((dir) -> Files.isRegularFile(dir.resolve("pom.xml"))).toList()) {
				if (module.getFileName().toString().equals("queue-core") || !Files.isDirectory(module.resolve("src"))) {
					continue;
				}
				try (Stream<Path> files = Files.walk(module.resolve("src"))) {
					files.filter((file) -> file.toString().endsWith(".java")).forEach(sources::add);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		assertThat(sources).as("sources of the other modules under %s", ROOT).isNotEmpty();
		return sources;
	}

	private static Set<String> packagesOf(JavaClasses classes) {
		Set<String> packages = new TreeSet<>();
		classes.forEach((type) -> packages.add(type.getPackageName()));
		return packages;
	}

	/** Each package of pgqueue a slice of its own; classes of other libraries in none. */
	private static final SliceAssignment BY_PACKAGE = new SliceAssignment() {

		@Override
		public SliceIdentifier getIdentifierOf(JavaClass type) {
			return type.getPackageName().startsWith("dev.pgqueue") ? SliceIdentifier.of(type.getPackageName())
					: SliceIdentifier.ignore();
		}

		@Override
		public String getDescription() {
			return "packages of pgqueue";
		}

	};

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Path locationOf(Class<?> type) {
		try {
			return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

/** Two files of one package that use each other, for the test that the loop is found. */
final class LoopOne {

	LoopTwo other() {
		return new LoopTwo();
	}

}

/** The other half of the loop {@link ArchitectureTests#a_loop_of_files_is_found} finds. */
final class LoopTwo {

	LoopOne other() {
		return new LoopOne();
	}

}
