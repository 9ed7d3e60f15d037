package dev.pgqueue.listener;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.PropertyName;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.deser.SettableBeanProperty;
import tools.jackson.databind.deser.bean.BeanDeserializerBase;
import tools.jackson.databind.json.JsonMapper;

/**
 * The properties a listener's payload type reads and requires, as Jackson sees them, and the check
 * that tells a payload written for another type from one written a version ahead or behind. Built
 * once per listener; a check reads the payload's top-level property names with a streaming parser
 * and stops as soon as the payload fits.
 *
 * <p>It applies to a type that Jackson reads property by property: a record or a bean, not a scalar,
 * string, enum, collection, map, array, tree or {@code Object}, nor a type read by a custom or
 * delegating deserializer or through a type id ({@code Optional<T>} is checked as {@code T}). A
 * payload that is a JSON object fits such a type when
 * <ol>
 * <li>it shares at least one property with the type: a name Jackson reads, after renames, naming
 * strategy, aliases and unwrapping. An empty object passes, as does any object for a type without
 * properties or one that takes any property ({@code @JsonAnySetter}); and</li>
 * <li>it gives every property the type requires a value other than null: those annotated
 * {@code @JsonProperty(required = true)}, and those JSpecify declares never null
 * ({@link JSpecifyNullness}).</li>
 * </ol>
 * Properties the type does not know are tolerated once the payload shares one (a producer a version
 * ahead added them), as are properties the type knows and the payload lacks, unless required (a
 * consumer a version ahead added them). {@code @JsonIgnoreProperties(ignoreUnknown = true)} changes
 * neither rule: it says what to do with extra properties, not that a payload of another type will do.
 * Whatever is not a JSON object is left to Jackson.
 */
final class PayloadShape {

	private static final Logger logger = LoggerFactory.getLogger(PayloadShape.class);

	/** Names a message lists at most, of the payload's and of the type's. */
	private static final int MAX_LISTED = 20;

	/** Characters of one name a message shows at most. */
	private static final int MAX_NAME_LENGTH = 100;

	/** Reads payloads for their names alone, without the databinding context a mapper's parser builds per call. */
	private final TokenStreamFactory tokens;

	private final boolean caseInsensitive;

	private final boolean takesAny;

	/** Every name Jackson reads (lower case if it reads names regardless of case). */
	private final Set<String> reads;

	/** The names the type reads, as declared, for messages. */
	private final List<String> readNames;

	/** The required properties' names, as declared. */
	private final List<String> required;

	/** Index in {@link #required} of each name and alias of a required property. */
	private final Map<String, Integer> requiredIndexByName = new HashMap<>();

	private PayloadShape(JsonMapper jsonMapper, BeanDeserializerBase bean) {
		this.tokens = jsonMapper.tokenStreamFactory();
		this.caseInsensitive = bean.isCaseInsensitive();
		this.takesAny = bean.hasAnySetter();
		Set<String> names = new LinkedHashSet<>();
		// Creator properties first, in the order they are declared (Jackson 3 sorts the others by name), so
		// that a record's components are listed as the record declares them.
		List<SettableBeanProperty> properties = new ArrayList<>();
		bean.creatorProperties().forEachRemaining(properties::add);
		properties.sort(Comparator.comparingInt(SettableBeanProperty::getCreatorIndex));
		bean.properties().forEachRemaining(properties::add);
		DeserializationConfig config = jsonMapper.deserializationConfig();
		List<String> required = new ArrayList<>();
		for (SettableBeanProperty property : properties) {
			names.add(property.getName());
			if (required.contains(property.getName()) || !isRequired(property)) {
				continue;
			}
			this.requiredIndexByName.put(key(property.getName()), required.size());
			for (PropertyName alias : property.findAliases(config)) {
				this.requiredIndexByName.put(key(alias.getSimpleName()), required.size());
			}
			required.add(property.getName());
		}
		// Aliases and the properties of @JsonUnwrapped values, which the loop above does not see.
		bean.collectAllPropertyNamesTo(names);
		this.readNames = List.copyOf(names);
		this.reads = names.stream().map(this::key).collect(Collectors.toUnmodifiableSet());
		this.required = List.copyOf(required);
	}

	/**
	 * The shape of payloads of {@code type} as {@code jsonMapper} reads them, or {@code null} when
	 * Jackson does not read the type property by property and so there is nothing to check.
	 */
	static @Nullable PayloadShape of(JsonMapper jsonMapper, JavaType type) {
		JavaType target = type.isReferenceType() ? type.getReferencedType() : type;
		ValueDeserializer<Object> deserializer;
		try {
			// The deserializer the mapper's readers use, so the properties are Jackson's own: renames,
			// naming strategy, aliases, mix-ins and ignorals applied.
			deserializer = jsonMapper._deserializationContext().findRootValueDeserializer(target);
		}
		catch (JacksonException ex) {
			// Jackson reports the problem on each job of the listener, as its readers always did.
			logger.debug("No payload shape for {}", target, ex);
			return null;
		}
		if (!(deserializer instanceof BeanDeserializerBase bean)
				|| bean.getValueInstantiator().canCreateUsingDelegate()) {
			return null;
		}
		return new PayloadShape(jsonMapper, bean);
	}

	private static boolean isRequired(SettableBeanProperty property) {
		if (property.getInjectableValueId() != null) {
			return false;
		}
		return property.isRequired() || JSpecifyNullness.isNonNull(property.getMember(), property.getType());
	}

	/** The names the type reads, as declared. */
	List<String> reads() {
		return this.readNames;
	}

	/** The names of the properties the type requires, as declared. */
	List<String> required() {
		return this.required;
	}

	/**
	 * What keeps {@code json} from fitting the type, as the end of a sentence (naming which rule it
	 * breaks, the payload's property names and the type's, never a value); {@code null} when it fits
	 * or is not a JSON object.
	 * @throws JacksonException when {@code json} is not JSON
	 */
	@Nullable String mismatch(String json) {
		try (JsonParser parser = this.tokens.createParser(ObjectReadContext.empty(), json)) {
			if (parser.nextToken() != JsonToken.START_OBJECT) {
				return null;
			}
			List<String> given = new ArrayList<>();
			boolean shares = this.takesAny || this.reads.isEmpty();
			BitSet valued = new BitSet(this.required.size());
			int requiredValued = 0;
			while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
				String name = parser.currentName();
				String key = key(name);
				JsonToken value = parser.nextToken();
				given.add(name);
				shares = shares || this.reads.contains(key);
				Integer index = this.requiredIndexByName.get(key);
				if (index != null && value != JsonToken.VALUE_NULL && !valued.get(index)) {
					valued.set(index);
					requiredValued++;
				}
				if (shares && requiredValued == this.required.size()) {
					return null;
				}
				parser.skipChildren();
			}
			// An empty object is no sign of another type: a producer that leaves out nulls writes one for
			// a value whose properties are all null.
			shares = shares || given.isEmpty();
			if (shares && requiredValued == this.required.size()) {
				return null;
			}
			return describe(given, shares, valued);
		}
	}

	private String describe(List<String> given, boolean shares, BitSet valued) {
		List<String> missing = new ArrayList<>();
		for (int i = 0; i < this.required.size(); i++) {
			if (!valued.get(i)) {
				missing.add(this.required.get(i));
			}
		}
		StringBuilder text = new StringBuilder("it");
		if (!shares) {
			text.append(" shares no property with the type");
		}
		if (!missing.isEmpty()) {
			text.append(shares ? "" : " and").append(" has no value for ").append(list(missing))
				.append(", which the type requires");
		}
		text.append(". The payload has ").append(given.isEmpty() ? "no property" : list(given));
		text.append("; the type reads ").append(list(this.readNames));
		if (!this.required.isEmpty()) {
			text.append(" and requires ").append(list(this.required));
		}
		return text.toString();
	}

	private static String list(List<String> names) {
		String listed = names.stream()
			.limit(MAX_LISTED)
			.map((name) -> (name.length() <= MAX_NAME_LENGTH) ? name : name.substring(0, MAX_NAME_LENGTH) + "…")
			.collect(Collectors.joining(", ", "[", ""));
		return listed + ((names.size() > MAX_LISTED) ? ", and " + (names.size() - MAX_LISTED) + " more]" : "]");
	}

	private String key(String name) {
		return this.caseInsensitive ? name.toLowerCase(Locale.ROOT) : name;
	}

}
