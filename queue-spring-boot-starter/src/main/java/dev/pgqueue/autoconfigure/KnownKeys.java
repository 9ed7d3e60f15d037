package dev.pgqueue.autoconfigure;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;

/**
 * The keys that {@link QueueProperties} binds, level by level, to explain a key under
 * {@code pgqueue} that binding left over: at which level it went wrong, the key of that level it is
 * most likely a typo of, else the keys of that level.
 *
 * <p>The keys are read from the properties classes the way Spring Boot's JavaBean binding reads
 * them: a property with a setter is a value (a list included), a {@code Map} is a level of names
 * the user chooses (a queue's, a kind's) above the keys of the map's value class, and a property
 * with only a getter is a group whose keys are those of its class. Names are compared in Spring
 * Boot's uniform form (lower case, no dashes), as binding compares them.
 */
final class KnownKeys {

	static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("pgqueue");

	private static final Class<?> ROOT_TYPE = QueueProperties.class;

	/** A key found at more places than this is too common a word to suggest one of them. */
	private static final int MOST_PLACES_SUGGESTED = 3;

	private KnownKeys() {
	}

	/** What is wrong with a key under {@code pgqueue} that {@link QueueProperties} does not bind. */
	static Explanation explain(ConfigurationPropertyName name) {
		Class<?> type = ROOT_TYPE;
		Key key = null;
		boolean belowMapEntry = false;
		for (int i = ROOT.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
			key = keysOf(type).get(name.getElement(i, Form.UNIFORM));
			if (key == null) {
				return unknown(name, i, type, belowMapEntry);
			}
			if (key.shape() == Shape.VALUE) {
				if (i + 1 < name.getNumberOfElements()) {
					return new Explanation(name.chop(i + 1) + " takes a value and has no keys below it",
							"Remove " + name + ".");
				}
				break;
			}
			type = key.type();
			belowMapEntry = (key.shape() == Shape.MAP);
			if (belowMapEntry) {
				i++; // the name the user chose: any name is one
			}
		}
		if (key != null && key.shape() != Shape.VALUE) {
			return new Explanation(name + " holds keys, not a value; its keys are " + describe(keysOf(type)),
					"Set the keys below " + name + " instead of a value.");
		}
		// Every element is a key: Spring Boot left it unbound for a reason of its own.
		return new Explanation("each part of it is a key, but Spring Boot left it unbound",
				"Check " + name + " and its value, or remove it.");
	}

	private static Explanation unknown(ConfigurationPropertyName name, int index, Class<?> type, boolean belowMapEntry) {
		ConfigurationPropertyName level = name.chop(index);
		String element = name.getElement(index, Form.DASHED);
		String problem = level + " has no key '" + element + "'";
		String rest = (index + 1 < name.getNumberOfElements()) ? "." + name.subName(index + 1) : "";
		int keyEnd = belowMapEntry ? endOfDottedName(name, index, type) : -1;
		if (keyEnd >= 0) {
			StringBuilder dotted = new StringBuilder(name.getElement(index - 1, Form.ORIGINAL));
			for (int i = index; i <= keyEnd; i++) {
				dotted.append('.').append(name.getElement(i, Form.ORIGINAL));
			}
			String bracketed = name.chop(index - 1) + "[" + dotted + "]." + name.subName(keyEnd + 1);
			return new Explanation(problem + "; a name with dots goes in brackets: did you mean " + bracketed + "?",
					"Rename " + name + " to " + bracketed + " (in YAML, \"[" + dotted + "]\" as the key under "
							+ name.getElement(index - 2, Form.DASHED) + ").");
		}
		String uniform = name.getElement(index, Form.UNIFORM);
		List<String> suggestions = closest(uniform, keysOf(type)).stream()
			.map((key) -> level + "." + key + rest)
			.toList();
		if (suggestions.isEmpty()) {
			List<String> elsewhere = new ArrayList<>();
			collectKeys(ROOT_TYPE, ROOT.toString(), uniform, type, elsewhere);
			if (elsewhere.size() <= MOST_PLACES_SUGGESTED) {
				suggestions = elsewhere.stream().map((key) -> key + rest).toList();
			}
		}
		if (!suggestions.isEmpty()) {
			String alternatives = String.join(" or ", suggestions);
			return new Explanation(problem + "; did you mean " + alternatives + "?",
					"Rename " + name + " to " + alternatives + ".");
		}
		return new Explanation(problem + "; its keys are " + describe(keysOf(type)),
				"Remove " + name + ", or replace it with one of the keys of " + level + ".");
	}

	/**
	 * Where a map key with dots ends, when the elements after it are a key of the map's value class:
	 * {@code pgqueue.kinds.report.render.timeout} is kind {@code report.render}'s timeout, written
	 * without the brackets its dot needs. -1 when no such reading exists.
	 * @param index the first element after the map key that is no key of the value class
	 */
	private static int endOfDottedName(ConfigurationPropertyName name, int index, Class<?> valueType) {
		for (int end = index; end < name.getNumberOfElements() - 1; end++) {
			if (isKeyPath(name, end + 1, valueType)) {
				return end;
			}
		}
		return -1;
	}

	/** Whether the elements of a name from {@code from} on are a key of {@code type}, all the way down. */
	private static boolean isKeyPath(ConfigurationPropertyName name, int from, Class<?> type) {
		Class<?> current = type;
		for (int i = from; i < name.getNumberOfElements(); i++) {
			Key key = keysOf(current).get(name.getElement(i, Form.UNIFORM));
			if (key == null) {
				return false;
			}
			if (key.shape() == Shape.VALUE) {
				return i == name.getNumberOfElements() - 1;
			}
			current = key.type();
			if (key.shape() == Shape.MAP) {
				i++;
			}
		}
		return false;
	}

	/**
	 * The full names of the keys with this uniform name at levels other than {@code except}, a map's
	 * names written {@code <name>}: {@code pgqueue.queues.<name>.concurrency} for a concurrency set
	 * directly under {@code pgqueue}.
	 */
	private static void collectKeys(Class<?> type, String path, String uniform, Class<?> except, List<String> found) {
		Map<String, Key> keys = keysOf(type);
		if (type != except && keys.containsKey(uniform)) {
			found.add(path + "." + keys.get(uniform).name());
		}
		for (Key key : keys.values()) {
			switch (key.shape()) {
				case GROUP -> collectKeys(key.type(), path + "." + key.name(), uniform, except, found);
				case MAP -> collectKeys(key.type(), path + "." + key.name() + ".<name>", uniform, except, found);
				case VALUE -> {
				}
			}
		}
	}

	/**
	 * The keys nearest to an unknown one, when they are near enough to be a typo of it: at most one
	 * edit in four characters, and at least one.
	 */
	private static List<String> closest(String uniform, Map<String, Key> keys) {
		int best = Math.max(1, uniform.length() / 4);
		List<String> closest = new ArrayList<>();
		for (Map.Entry<String, Key> key : keys.entrySet()) {
			int distance = distance(uniform, key.getKey());
			if (distance < best) {
				closest.clear();
				best = distance;
			}
			if (distance == best) {
				closest.add(key.getValue().name());
			}
		}
		return closest;
	}

	/**
	 * Edits that turn one string into the other: insertions, deletions, substitutions and swaps of
	 * two neighbouring characters (optimal string alignment).
	 */
	private static int distance(String a, String b) {
		int[][] d = new int[a.length() + 1][b.length() + 1];
		for (int i = 0; i <= a.length(); i++) {
			d[i][0] = i;
		}
		for (int j = 0; j <= b.length(); j++) {
			d[0][j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			for (int j = 1; j <= b.length(); j++) {
				int cost = (a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1;
				d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
				if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
					d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
				}
			}
		}
		return d[a.length()][b.length()];
	}

	private static String describe(Map<String, Key> keys) {
		return String.join(", ", keys.values()
			.stream()
			.map((key) -> (key.shape() == Shape.VALUE) ? key.name() : key.name() + ".*")
			.sorted()
			.toList());
	}

	/** The keys of a properties class, by their uniform name. */
	private static Map<String, Key> keysOf(Class<?> type) {
		Map<String, Key> keys = new TreeMap<>();
		for (PropertyDescriptor property : BeanUtils.getPropertyDescriptors(type)) {
			if (property.getReadMethod() == null || "class".equals(property.getName())) {
				continue;
			}
			String name = DataObjectPropertyName.toDashedForm(property.getName());
			Class<?> propertyType = property.getPropertyType();
			Key key;
			if (Map.class.isAssignableFrom(propertyType)) {
				Class<?> valueType = ResolvableType.forMethodReturnType(property.getReadMethod())
					.asMap()
					.resolveGeneric(1);
				key = new Key(name, Shape.MAP, (valueType != null) ? valueType : Object.class);
			}
			else if (property.getWriteMethod() == null && !propertyType.getName().startsWith("java.")) {
				key = new Key(name, Shape.GROUP, propertyType);
			}
			else {
				key = new Key(name, Shape.VALUE, propertyType);
			}
			keys.put(ConfigurationPropertyName.of(name).getElement(0, Form.UNIFORM), key);
		}
		return keys;
	}

	/** What a key holds: a value, a group of keys, or names the user chooses, each with a group of keys. */
	enum Shape {

		VALUE, GROUP, MAP

	}

	/**
	 * One key of a properties class.
	 * @param name the key, dashed
	 * @param shape what it holds
	 * @param type its type; for a map, the type of its values
	 */
	record Key(String name, Shape shape, Class<?> type) {

	}

	/**
	 * What is wrong with an unknown key and what to do about it.
	 * @param reason what is wrong, naming the level of the key
	 * @param action what to do, naming the key
	 */
	record Explanation(String reason, String action) {

	}

}
