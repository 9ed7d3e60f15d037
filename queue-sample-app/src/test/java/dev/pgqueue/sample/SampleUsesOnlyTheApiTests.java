package dev.pgqueue.sample;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample stands for an application: it is written against {@code dev.pgqueue} (and the starter's
 * configuration keys) alone. The engine's packages are internal and may change in any release; an
 * application that needs one of their types to do what the guide describes shows a gap in the API.
 */
class SampleUsesOnlyTheApiTests {

	private static final JavaClasses SAMPLE = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.pgqueue.sample");

	@Test
	void theSampleUsesNoEnginePackage() {
		assertThat(SAMPLE.contain(SampleApplication.class)).isTrue();
		noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage("dev.pgqueue.engine..", "dev.pgqueue.listener..")
			.because("an application uses dev.pgqueue and configuration; the engine is internal")
			.check(SAMPLE);
	}

}
