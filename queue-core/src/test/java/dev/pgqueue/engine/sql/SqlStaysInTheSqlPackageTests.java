package dev.pgqueue.engine.sql;

import java.sql.Statement;
import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

import static com.tngtech.archunit.base.DescribedPredicate.describe;
import static com.tngtech.archunit.core.domain.JavaAccess.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackages;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every statement of the engine is run by a repository of {@code dev.pgqueue.engine.sql} (see its
 * package-info): no class of queue-core's main code elsewhere reaches JDBC's statements or Spring's
 * JDBC template. {@code dev.pgqueue.schema} is the other exception: it owns the migrations and sits
 * below the engine.
 */
class SqlStaysInTheSqlPackageTests {

	/** Queue-core's main classes, and nothing else: not its tests, not the modules beside it. */
	private static final JavaClasses MAIN = new ClassFileImporter()
		.importLocations(Set.of(Location.of(JobRepository.class.getProtectionDomain().getCodeSource().getLocation())));

	/** What only the sql and schema packages may touch. */
	private static final String JDBC_TYPES = "JdbcTemplate, ConnectionCallback or java.sql.Statement "
			+ "(PreparedStatement, CallableStatement), or a subtype";

	private static final DescribedPredicate<JavaClass> JDBC = assignableTo(JdbcTemplate.class)
		.or(assignableTo(ConnectionCallback.class))
		.or(assignableTo(Statement.class))
		.as("are " + JDBC_TYPES);

	/**
	 * The engine's assembly on one database (the parts {@code DatabaseEngine} runs) takes the
	 * application's JdbcTemplate (or makes one on the data source) and hands it to {@code Repositories.on}
	 * and the repositories beside them; it runs no statement itself.
	 */
	private static final String ASSEMBLY = "dev.pgqueue.engine.DatabaseParts";

	/** What the assembly on one database is built from, the application's JdbcTemplate among it. */
	private static final Set<String> ASSEMBLY_BUILDERS = Set.of("dev.pgqueue.engine.QueueEngineBuilder",
			"dev.pgqueue.engine.EngineDatabase");

	/** The classes that must run SQL through the repositories. */
	private static final DescribedPredicate<JavaClass> OUTSIDE = resideOutsideOfPackages("dev.pgqueue.engine.sql..",
			"dev.pgqueue.schema..")
		.and(describe("not " + ASSEMBLY + " or its builders",
				(c) -> !c.getName().equals(ASSEMBLY) && !c.getName().startsWith(ASSEMBLY + "$")
						&& !ASSEMBLY_BUILDERS.contains(c.getName())))
		.as("lie outside dev.pgqueue.engine.sql and dev.pgqueue.schema");

	private static final String BECAUSE = "SQL runs only through the repositories of dev.pgqueue.engine.sql, which "
			+ "run the named statements of its *Statements classes";

	@Test
	void importsQueueCoresMainClasses() {
		assertThat(MAIN.contain(JobRepository.class)).isTrue();
		assertThat(MAIN.contain("dev.pgqueue.engine.twophase.TwoPhaseJobRunner")).isTrue();
		assertThat(MAIN.contain(SqlStaysInTheSqlPackageTests.class)).isFalse();
	}

	@Test
	void noClassOutsideTheSqlPackageUsesJdbcStatementsOrTheTemplate() {
		ArchRule rule = noClasses().that(OUTSIDE).should().dependOnClassesThat(JDBC).because(BECAUSE);
		rule.check(MAIN);
	}

	@Test
	void noClassOutsideTheSqlPackageCallsAMethodOrConstructorThatTakesThem() {
		// A lambda passed as a ConnectionCallback shows in the class file only as the call it is passed to.
		DescribedPredicate<JavaCall<?>> takingJdbc = describe("it takes a parameter of type " + JDBC_TYPES,
				(call) -> call.getTarget().getRawParameterTypes().stream().anyMatch(JDBC));
		ArchRule rule = noClasses().that(OUTSIDE).should().callCodeUnitWhere(takingJdbc).because(BECAUSE);
		rule.check(MAIN);
	}

	@Test
	void noClassOutsideTheSqlPackageReachesARepositorysTemplate() {
		ArchRule rule = noClasses().that(OUTSIDE).should().callMethodWhere(target(name("jdbcTemplate"))).because(BECAUSE);
		rule.check(MAIN);
	}

}
