package dev.pgqueue.engine.service;

import java.util.Set;
import java.util.concurrent.Executors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * One lifecycle contract for every thread of the engine: a class of queue-core's main code that
 * makes a thread (through {@link EngineThreads}, a {@link Thread} constructor or {@link Executors})
 * is an {@link EngineService}, or a class nested in one. Parts that need threads only for a while (a
 * poller's claim strategy and scope) hand services to their owner instead of making threads.
 */
class ThreadsBelongToServicesTests {

	/** Queue-core's main classes, and nothing else. */
	private static final JavaClasses MAIN = new ClassFileImporter()
		.importLocations(Set.of(Location.of(EngineService.class.getProtectionDomain().getCodeSource().getLocation())));

	/**
	 * Classes that make threads without being services, each for a reason: the time limits' watchdog
	 * belongs to the job runner, which has no lifecycle (its thread ends after a minute without a
	 * watched attempt); the shards' package is being rebuilt elsewhere.
	 */
	private static final Set<String> NOT_YET_SERVICES = Set.of("dev.pgqueue.engine.run.JobTimeouts");

	private static final String SHARDS = "dev.pgqueue.engine.shards";

	/** The methods of {@link EngineThreads} that make threads, or what makes them. */
	private static final Set<String> THREAD_MAKERS = Set.of("newThread", "platformFactory", "newScheduler");

	private static final DescribedPredicate<JavaCall<?>> MAKING_A_THREAD = describe(
			"it makes a thread (EngineThreads, a Thread constructor, Executors)", (call) -> {
				JavaClass owner = call.getTarget().getOwner();
				return owner.isEquivalentTo(EngineThreads.class) && THREAD_MAKERS.contains(call.getName())
						|| owner.isAssignableTo(Thread.class) && call.getName().equals("<init>")
						|| owner.isEquivalentTo(Executors.class);
			});

	private static final DescribedPredicate<JavaClass> OUTSIDE_A_SERVICE = describe(
			"are neither an EngineService nor nested in one, nor EngineThreads",
			(type) -> !inAService(type) && !type.isEquivalentTo(EngineThreads.class)
					&& !NOT_YET_SERVICES.contains(topLevel(type).getName())
					&& !type.getPackageName().startsWith(SHARDS));

	@Test
	void everyClassThatMakesAThreadIsAnEngineService() {
		noClasses().that(OUTSIDE_A_SERVICE)
			.should()
			.callCodeUnitWhere(MAKING_A_THREAD)
			.because("every thread belongs to an EngineService, which starts and stops it like every other")
			.check(MAIN);
	}

	private static boolean inAService(JavaClass type) {
		JavaClass current = type;
		while (true) {
			if (current.isAssignableTo(EngineService.class)) {
				return true;
			}
			if (current.getEnclosingClass().isEmpty()) {
				return false;
			}
			current = current.getEnclosingClass().get();
		}
	}

	private static JavaClass topLevel(JavaClass type) {
		JavaClass current = type;
		while (current.getEnclosingClass().isPresent()) {
			current = current.getEnclosingClass().get();
		}
		return current;
	}

}
