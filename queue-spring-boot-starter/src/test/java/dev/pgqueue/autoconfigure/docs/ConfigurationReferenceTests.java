package dev.pgqueue.autoconfigure.docs;

import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.pgqueue.autoconfigure.docs.Markdown.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/configuration.md} documents every key of the starter's configuration metadata (the
 * {@code META-INF/spring-configuration-metadata.json} that the configuration processor generates from
 * {@code QueueProperties}) with its default, and no key that does
 * not exist. Keys under a map ({@code pgqueue.queues.<name>.*}, {@code pgqueue.kinds.<kind>.*}) are
 * read from the map's value class by reflection, as Spring Boot binds them: its setters, and the
 * getters of nested groups that have no setter ({@code retry.*}).
 *
 * <p>A default is checked where the metadata gives one, else where a new instance of the properties
 * class holds one (not null, not an empty collection); the default column must then show it as code,
 * in any form that binds to the same value ({@code 0} and {@code 0ms}, {@code read-only} and
 * {@code READ_ONLY}).
 */
class ConfigurationReferenceTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/** A documented key under a map: the map's key stands as a placeholder such as {@code <name>}. */
	private static final Pattern MAP_ENTRY_KEY = Pattern.compile("^(.+?)\\.<[^>]+>\\.(.+)$");

	private static JsonNode metadata;

	private static Map<String, Documented> documented;

	@BeforeAll
	static void read() throws Exception {
		metadata = pgqueueMetadata();
		documented = documentedKeys();
	}

	@Test
	void everyKeyOfTheMetadataIsDocumentedWithItsDefault() throws Exception {
		List<String> problems = new ArrayList<>();
		int checkedDefaults = 0;
		for (JsonNode property : metadata.get("properties")) {
			String name = property.get("name").asString();
			String type = text(property, "type");
			Documented row = documented.get(name);
			if (row == null) {
				problems.add("missing: `" + name + "`" + describe(property));
				continue;
			}
			Object expected = property.has("defaultValue") && !property.get("defaultValue").isNull()
					? scalar(property.get("defaultValue")) : defaultOfInstance(name);
			if (expected != null) {
				checkedDefaults++;
				if (!shows(row.defaultCell(), expected, type)) {
					problems.add("wrong default: `" + name + "` (line " + row.line() + ") shows [" + row.defaultCell()
							+ "], the default is " + expected);
				}
			}
			if (type != null && type.startsWith("java.util.Map<")) {
				checkedDefaults += checkMapEntries(name, type, problems);
			}
		}

		assertThat(metadata.get("properties").size()).as("properties in the metadata").isGreaterThan(20);
		assertThat(checkedDefaults).as("defaults checked").isGreaterThan(30);
		assertThat(problems).as("docs/configuration.md against the configuration metadata:%n%s%n",
				String.join(System.lineSeparator(), problems))
			.isEmpty();
	}

	@Test
	void everyDocumentedPgqueueKeyExists() throws Exception {
		Map<String, String> properties = new TreeMap<>();
		for (JsonNode property : metadata.get("properties")) {
			properties.put(property.get("name").asString(), text(property, "type"));
		}
		List<String> stale = new ArrayList<>();
		for (Documented row : documented.values()) {
			String key = row.key();
			if (!key.startsWith("pgqueue.") || properties.containsKey(key)) {
				continue;
			}
			Matcher entry = MAP_ENTRY_KEY.matcher(key);
			String mapType = entry.matches() ? properties.get(entry.group(1)) : null;
			if (mapType == null || !mapType.startsWith("java.util.Map<")
					|| !keysOf(valueClass(mapType)).containsKey(entry.group(2))) {
				stale.add("line " + row.line() + ": `" + key + "` is no key of the starter");
			}
		}

		assertThat(documented).as("keys in the tables of docs/configuration.md").hasSizeGreaterThan(30);
		assertThat(stale).as("docs/configuration.md documents keys that do not exist:%n%s%n",
				String.join(System.lineSeparator(), stale))
			.isEmpty();
	}

	/** Every key of a map's value class is documented under the map, with its default. */
	private static int checkMapEntries(String map, String type, List<String> problems) throws Exception {
		Class<?> valueClass = valueClass(type);
		Object fresh = valueClass.getDeclaredConstructor().newInstance();
		int checked = 0;
		for (Map.Entry<String, Class<?>> key : keysOf(valueClass).entrySet()) {
			Documented row = documented.values()
				.stream()
				.filter((candidate) -> {
					Matcher entry = MAP_ENTRY_KEY.matcher(candidate.key());
					return entry.matches() && entry.group(1).equals(map) && entry.group(2).equals(key.getKey());
				})
				.findFirst()
				.orElse(null);
			if (row == null) {
				problems.add("missing: `" + map + ".<…>." + key.getKey() + "` (a key of " + valueClass.getSimpleName()
						+ ")");
				continue;
			}
			Object expected = presentOrNull(valueAt(fresh, key.getKey()));
			if (expected != null) {
				checked++;
				if (!shows(row.defaultCell(), expected, key.getValue().getName())) {
					problems.add("wrong default: `" + row.key() + "` (line " + row.line() + ") shows ["
							+ row.defaultCell() + "], the default is " + expected);
				}
			}
		}
		return checked;
	}

	/**
	 * The keys Spring Boot binds on a class, kebab-case, with their types: one per setter, and those of
	 * nested groups that only have a getter (their own class, in pgqueue's packages).
	 */
	static Map<String, Class<?>> keysOf(Class<?> type) {
		Map<String, Class<?>> keys = new TreeMap<>();
		for (Method method : type.getMethods()) {
			if (Modifier.isStatic(method.getModifiers()) || method.getDeclaringClass() == Object.class) {
				continue;
			}
			String name = method.getName();
			if (name.startsWith("set") && name.length() > 3 && method.getParameterCount() == 1) {
				keys.put(kebab(name.substring(3)), method.getParameterTypes()[0]);
			}
		}
		for (Method method : type.getMethods()) {
			String name = method.getName();
			Class<?> returned = method.getReturnType();
			if (name.startsWith("get") && name.length() > 3 && method.getParameterCount() == 0
					&& !Modifier.isStatic(method.getModifiers()) && returned.getName().startsWith("dev.pgqueue.")
					&& !returned.isEnum() && !keys.containsKey(kebab(name.substring(3)))) {
				String group = kebab(name.substring(3));
				keysOf(returned).forEach((key, keyType) -> keys.put(group + "." + key, keyType));
			}
		}
		return keys;
	}

	/** The default a fresh properties object holds for a key of the metadata, if it is one of pgqueue's. */
	private static Object defaultOfInstance(String name) throws Exception {
		String root = null;
		String rootType = null;
		for (JsonNode group : metadata.get("groups")) {
			String groupName = group.get("name").asString();
			String groupType = text(group, "type");
			if (!group.has("sourceMethod") && groupType != null && groupType.startsWith("dev.pgqueue.")
					&& name.startsWith(groupName + ".") && (root == null || groupName.length() > root.length())) {
				root = groupName;
				rootType = groupType;
			}
		}
		if (root == null) {
			return null;
		}
		Object instance;
		try {
			instance = Class.forName(rootType).getDeclaredConstructor().newInstance();
		}
		catch (ReflectiveOperationException ex) {
			return null; // not a properties bean (an endpoint): the metadata alone says its defaults
		}
		return presentOrNull(valueAt(instance, name.substring(root.length() + 1)));
	}

	/** The value of a dotted kebab-case path on an object, through its getters. */
	private static Object valueAt(Object target, String path) throws Exception {
		Object value = target;
		for (String segment : path.split("\\.")) {
			if (value == null) {
				return null;
			}
			value = getter(value.getClass(), segment).invoke(value);
		}
		return value;
	}

	private static Method getter(Class<?> type, String kebab) throws NoSuchMethodException {
		String camel = camel(kebab);
		for (String prefix : List.of("get", "is")) {
			try {
				return type.getMethod(prefix + camel);
			}
			catch (NoSuchMethodException ex) {
				// try the next form
			}
		}
		throw new NoSuchMethodException(type.getName() + " has no getter for " + kebab);
	}

	private static Object presentOrNull(Object value) {
		if (value instanceof Collection<?> collection && collection.isEmpty()) {
			return null;
		}
		if (value instanceof Map<?, ?> map && map.isEmpty()) {
			return null;
		}
		return value;
	}

	/** Whether a default cell shows a value as code, in a form that binds to the same value. */
	static boolean shows(String cell, Object expected, String type) {
		for (String span : Markdown.codeSpans(cell)) {
			if (sameValue(span, expected, type)) {
				return true;
			}
		}
		return false;
	}

	private static boolean sameValue(String documented, Object expected, String type) {
		try {
			if (expected instanceof Duration || Duration.class.getName().equals(type)) {
				Duration value = (expected instanceof Duration duration) ? duration
						: DurationStyle.detectAndParse(expected.toString());
				return DurationStyle.detectAndParse(documented).equals(value);
			}
			if (expected instanceof DataSize || DataSize.class.getName().equals(type)) {
				DataSize value = (expected instanceof DataSize size) ? size : DataSize.parse(expected.toString());
				return DataSize.parse(documented).equals(value);
			}
		}
		catch (RuntimeException ex) {
			return false;
		}
		String value = (expected instanceof Enum<?> constant) ? constant.name() : expected.toString();
		return normalized(documented).equals(normalized(value));
	}

	private static String normalized(String value) {
		return value.strip().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/** The keys in the first column of the tables of docs/configuration.md. */
	private static Map<String, Documented> documentedKeys() {
		Markdown reference = Markdown.read(Repository.root().resolve("docs/configuration.md"));
		Map<String, Documented> keys = new LinkedHashMap<>();
		for (Row row : reference.tableRows()) {
			List<String> cells = row.cells();
			String first = cells.get(0);
			if (cells.size() < 2 || !first.startsWith("`") || !first.endsWith("`")) {
				continue;
			}
			List<String> spans = Markdown.codeSpans(first);
			if (spans.size() == 1 && spans.get(0).matches("[a-z][a-z0-9-]*(\\.[a-zA-Z0-9<>*\\[\\]-]+)+")) {
				keys.putIfAbsent(spans.get(0), new Documented(spans.get(0), row.line(), cells.get(1)));
			}
		}
		return Collections.unmodifiableMap(keys);
	}

	/** The starter's own metadata: of the several on the class path, the one that describes pgqueue. */
	private static JsonNode pgqueueMetadata() throws Exception {
		JsonMapper mapper = JsonMapper.builder().build();
		List<URL> found = Collections.list(ConfigurationReferenceTests.class.getClassLoader().getResources(METADATA));
		for (URL url : found) {
			try (InputStream in = url.openStream()) {
				JsonNode candidate = mapper.readTree(in);
				for (JsonNode group : candidate.path("groups")) {
					if ("dev.pgqueue.autoconfigure.QueueProperties".equals(text(group, "type"))) {
						return candidate;
					}
				}
			}
		}
		throw new AssertionError("No " + METADATA + " describing QueueProperties on the class path (found "
				+ found + "); build the starter first");
	}

	private static Class<?> valueClass(String mapType) throws ClassNotFoundException {
		String value = mapType.substring(mapType.indexOf(',') + 1, mapType.lastIndexOf('>')).strip();
		return Class.forName(value);
	}

	private static String describe(JsonNode property) {
		String type = text(property, "type");
		return (type != null) ? " (" + type + ")" : "";
	}

	private static String text(JsonNode node, String field) {
		JsonNode value = node.get(field);
		return (value == null || value.isNull()) ? null : value.asString();
	}

	private static Object scalar(JsonNode value) {
		if (value.isBoolean()) {
			return value.booleanValue();
		}
		if (value.isNumber()) {
			return value.numberValue();
		}
		if (value.isArray()) {
			return value.isEmpty() ? null : value.toString();
		}
		return value.asString();
	}

	static String kebab(String camel) {
		StringBuilder kebab = new StringBuilder();
		for (char c : camel.toCharArray()) {
			if (Character.isUpperCase(c)) {
				if (!kebab.isEmpty()) {
					kebab.append('-');
				}
				kebab.append(Character.toLowerCase(c));
			}
			else {
				kebab.append(c);
			}
		}
		return kebab.toString();
	}

	private static String camel(String kebab) {
		StringBuilder camel = new StringBuilder();
		boolean upper = true;
		for (char c : kebab.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

	record Documented(String key, int line, String defaultCell) {

		Documented {
			Objects.requireNonNull(key);
		}

	}

}
