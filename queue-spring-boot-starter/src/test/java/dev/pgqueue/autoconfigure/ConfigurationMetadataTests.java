package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata the starter's jar carries, as an IDE reads it: Spring Boot's processor
 * writes it from {@link QueueProperties}, merged with
 * {@code META-INF/additional-spring-configuration-metadata.json}. Every key has a description, and
 * every key with a default at run time shows that default (the processor cannot read a default that
 * is a constant of another class, so the additional file states those, and this test keeps it true).
 */
class ConfigurationMetadataTests {

	private static final Path METADATA = Path.of("target/classes/META-INF/spring-configuration-metadata.json");

	/** Keys whose value is a map of entries of their own (queues, kinds, schedules by name): no default. */
	private static final List<String> MAPS = List.of("pgqueue.queues", "pgqueue.kinds", "pgqueue.schedules",
			"pgqueue.shards");

	@Test
	void everyKeyHasADescription() {
		assertThat(properties()).allSatisfy((property) -> assertThat(property.path("description").asString(""))
			.as("description of %s", property.path("name").asString())
			.isNotBlank());
	}

	@Test
	void everyKeyWithADefaultAtRunTimeShowsThatDefault() {
		QueueProperties fresh = new QueueProperties();
		BeanWrapperImpl bean = new BeanWrapperImpl(fresh);
		List<String> wrong = new ArrayList<>();
		int checked = 0;
		for (JsonNode property : properties()) {
			String name = property.path("name").asString();
			if (!name.startsWith("pgqueue.") || MAPS.contains(name)) {
				continue;
			}
			Object runtime = bean.getPropertyValue(camelCase(name.substring("pgqueue.".length())));
			JsonNode shown = property.get("defaultValue");
			checked++;
			if (runtime == null) {
				if (shown != null) {
					wrong.add(name + ": shows default " + shown + " but has none at run time");
				}
			}
			else if (shown == null) {
				wrong.add(name + ": shows no default, has " + runtime + " at run time");
			}
			else if (!sameValue(runtime, shown)) {
				wrong.add(name + ": shows default " + shown + ", has " + runtime + " at run time");
			}
		}
		assertThat(checked).as("keys checked").isGreaterThan(30);
		assertThat(wrong).as("keys whose metadata misstates their default").isEmpty();
	}

	@Test
	void theHealthIndicatorsSwitchIsDocumented() {
		JsonNode health = properties().stream()
			.filter((property) -> property.path("name").asString().equals("management.health.pgqueue.enabled"))
			.findFirst()
			.orElseThrow(() -> new AssertionError("management.health.pgqueue.enabled is not in the metadata"));
		assertThat(health.path("defaultValue").asBoolean(false)).isTrue();
		assertThat(health.path("type").asString()).isEqualTo("java.lang.Boolean");
	}

	@Test
	void theEndpointsValuesAndTheInfoContributorsSwitchAreDocumented() {
		Map<String, JsonNode> byName = properties().stream()
			.collect(Collectors.toMap((property) -> property.path("name").asString(), (property) -> property));
		assertThat(byName.get("management.endpoint.pgqueue.show-values")).as("show-values").isNotNull();
		assertThat(byName.get("management.endpoint.pgqueue.show-values").path("defaultValue").asString())
			.isEqualTo("never");
		assertThat(byName.get("management.endpoint.pgqueue.roles")).as("roles").isNotNull();
		JsonNode info = byName.get("management.info.pgqueue.enabled");
		assertThat(info).as("management.info.pgqueue.enabled").isNotNull();
		assertThat(info.path("defaultValue").asBoolean(false)).isTrue();
		assertThat(info.path("type").asString()).isEqualTo("java.lang.Boolean");
	}

	@Test
	void enumKeysOfferTheirValuesAndExceptionsCompleteAsClasses() {
		Map<String, JsonNode> hints = StreamSupport.stream(metadata().path("hints").spliterator(), false)
			.collect(Collectors.toMap((hint) -> hint.path("name").asString(), (hint) -> hint));
		assertThat(values(hints.get("pgqueue.queues.values.mode"))).containsExactly("transactional", "leased");
		assertThat(values(hints.get("pgqueue.queues.values.assignment"))).contains("shared", "buckets");
		assertThat(hints.get("pgqueue.queues.values.non-retryable-exceptions").path("providers").get(0).toString())
			.contains("class-reference", "java.lang.Throwable");
	}

	@Test
	void autoConfigurationConditionsArePrecomputed() throws IOException {
		Properties conditions = new Properties();
		try (InputStream in = Files.newInputStream(Path.of("target/classes/META-INF/spring-autoconfigure-metadata.properties"))) {
			conditions.load(in);
		}
		assertThat(conditions.stringPropertyNames()).anyMatch((key) -> key.startsWith(QueueAutoConfiguration.class.getName() + "."));
	}

	private static List<String> values(JsonNode hint) {
		assertThat(hint).as("hint").isNotNull();
		return StreamSupport.stream(hint.path("values").spliterator(), false)
			.map((value) -> value.path("value").asString())
			.toList();
	}

	private static boolean sameValue(Object runtime, JsonNode shown) {
		if (runtime instanceof Duration duration) {
			return DurationStyle.detectAndParse(shown.asString()).equals(duration);
		}
		if (runtime instanceof DataSize size) {
			return DataSize.parse(shown.asString()).equals(size);
		}
		if (runtime instanceof Enum<?> constant) {
			return shown.asString().equalsIgnoreCase(constant.name().replace('_', '-'));
		}
		return shown.isValueNode() && shown.asString().equals(runtime.toString());
	}

	/** {@code maintenance.cleanup-batch-size} as the bean path {@code maintenance.cleanupBatchSize}. */
	private static String camelCase(String key) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : key.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				path.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return path.toString();
	}

	private static List<JsonNode> properties() {
		return StreamSupport.stream(metadata().path("properties").spliterator(), false).toList();
	}

	private static JsonNode metadata() {
		return JsonMapper.builder().build().readTree(METADATA.toFile());
	}

}
