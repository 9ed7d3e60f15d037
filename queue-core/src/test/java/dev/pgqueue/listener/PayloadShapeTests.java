package dev.pgqueue.listener;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.jspecify.annotations.NonNull;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.NullUnmarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ParameterizedTypeReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rule that tells a payload of another type from one a producer or consumer a version ahead
 * wrote, with Jackson's own view of each type.
 */
class PayloadShapeTests {

	private static final String SHIPPED = "{\"trackingNumber\":\"1Z999\",\"shippedAt\":\"2026-11-25T10:15:30Z\"}";

	private final JsonMapper jsonMapper = JsonMapper.builder().build();

	@Test
	void aPayloadThatSharesNoPropertyWithTheTypeDoesNotFit() {
		assertThat(shape(LooseOrderShipped.class).mismatch("{\"orderId\":42,\"total\":9.5}"))
			.isEqualTo("it shares no property with the type. The payload has [orderId, total]; "
					+ "the type reads [trackingNumber, shippedAt]");
		assertThat(shape(LooseOrderShipped.class).mismatch(SHIPPED)).isNull();
	}

	@Test
	void aPayloadFromAProducerAVersionAheadWithAPropertyTheTypeDoesNotKnowFits() {
		String ahead = "{\"trackingNumber\":\"1Z999\",\"shippedAt\":\"2026-11-25T10:15:30Z\",\"carrier\":\"ups\"}";

		assertThat(shape(OrderShipped.class).mismatch(ahead)).isNull();
		assertThat(this.jsonMapper.readValue(ahead, OrderShipped.class))
			.isEqualTo(new OrderShipped("1Z999", Instant.parse("2026-11-25T10:15:30Z")));
	}

	@Test
	void aPayloadForAConsumerAVersionAheadThatAddedANullableComponentFits() {
		assertThat(shape(OrderShippedWithCarrier.class).required()).containsExactly("trackingNumber", "shippedAt");
		assertThat(shape(OrderShippedWithCarrier.class).mismatch(SHIPPED)).isNull();
		assertThat(this.jsonMapper.readValue(SHIPPED, OrderShippedWithCarrier.class).carrier()).isNull();
	}

	@Test
	void aComponentOfANullMarkedRecordIsRequiredAndMissesWhenAbsentOrNull() {
		PayloadShape shape = shape(OrderShipped.class);

		assertThat(shape.required()).containsExactly("trackingNumber", "shippedAt");
		assertThat(shape.mismatch("{\"trackingNumber\":\"1Z999\"}"))
			.isEqualTo("it has no value for [shippedAt], which the type requires. The payload has [trackingNumber]; "
					+ "the type reads [trackingNumber, shippedAt] and requires [trackingNumber, shippedAt]");
		assertThat(shape.mismatch("{\"trackingNumber\":\"1Z999\",\"shippedAt\":null}"))
			.startsWith("it has no value for [shippedAt], which the type requires.");
		assertThat(shape.mismatch("{\"orderId\":42}"))
			.startsWith("it shares no property with the type and has no value for [trackingNumber, shippedAt], "
					+ "which the type requires.");
	}

	@Test
	void anUnmarkedRecordRequiresOnlyWhatIsAnnotatedNonNull() {
		assertThat(shape(LooseOrderShipped.class).required()).isEmpty();
		assertThat(shape(LooseOrderShipped.class).mismatch("{\"trackingNumber\":\"1Z999\"}")).isNull();
		assertThat(shape(Parcel.class).required()).containsExactly("id");
		assertThat(shape(Parcel.class).mismatch("{\"label\":\"fragile\"}"))
			.startsWith("it has no value for [id], which the type requires.");
	}

	@Test
	void jsonPropertyRequiredIsRequiredOnFieldsSettersAndPrimitives() {
		PayloadShape shape = shape(Invoice.class);

		assertThat(shape.required()).containsExactlyInAnyOrder("customer", "amount");
		assertThat(shape.mismatch("{\"customer\":\"acme\",\"note\":\"urgent\"}"))
			.startsWith("it has no value for [amount], which the type requires.");
		assertThat(shape.mismatch("{\"customer\":\"acme\",\"amount\":120}")).isNull();
	}

	@Test
	void primitivesOptionalsTypeVariablesAndUnannotatedFieldsAreNotRequiredByNullness() {
		assertThat(shape(Counters.class).required()).containsExactly("name");
		assertThat(shape(Envelope.class).required()).containsExactly("id");
		assertThat(shape(MarkedSettings.class).required()).isEmpty();
		assertThat(shape(Counters.class).mismatch("{\"name\":\"jobs\"}")).isNull();
	}

	@Test
	void renamesAndAliasesAreJacksonsOwn() {
		PayloadShape shape = shape(Renamed.class);

		assertThat(shape.mismatch("{\"tracking_no\":\"1Z999\"}")).isNull();
		assertThat(shape.mismatch("{\"shipped\":\"2026-11-25T10:15:30Z\"}")).isNull();
		assertThat(shape.mismatch("{\"trackingNumber\":\"1Z999\"}")).startsWith("it shares no property");
	}

	@Test
	void theMappersNamingStrategyAndCaseInsensitivityApply() {
		JsonMapper snakeCase = JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
		PayloadShape snake = PayloadShape.of(snakeCase, snakeCase.constructType(LooseOrderShipped.class));
		assertThat(snake.mismatch("{\"tracking_number\":\"1Z999\"}")).isNull();
		assertThat(snake.mismatch(SHIPPED)).contains("the type reads [tracking_number, shipped_at]");

		JsonMapper anyCase = JsonMapper.builder().enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES).build();
		PayloadShape caseless = PayloadShape.of(anyCase, anyCase.constructType(OrderShipped.class));
		assertThat(caseless.mismatch("{\"TRACKINGNUMBER\":\"1Z999\",\"ShippedAt\":\"2026-11-25T10:15:30Z\"}"))
			.isNull();
	}

	@Test
	void aTypeThatTakesAnyPropertyTakesAnyObject() {
		assertThat(shape(Attributes.class).mismatch("{\"orderId\":42,\"total\":9.5}")).isNull();
	}

	@Test
	void ignoringUnknownPropertiesDoesNotLetAPayloadOfAnotherTypeThrough() {
		assertThat(shape(Tolerant.class).mismatch("{\"orderId\":42}")).startsWith("it shares no property");
		assertThat(shape(Tolerant.class).mismatch("{\"orderId\":42,\"trackingNumber\":\"1Z999\"}")).isNull();
	}

	@Test
	void thePropertiesOfAnUnwrappedValueAreSharedToo() {
		assertThat(shape(Shipment.class).reads()).contains("id", "street", "city");
		assertThat(shape(Shipment.class).mismatch("{\"street\":\"Main St\"}")).isNull();
	}

	@Test
	void anEmptyObjectFitsUnlessTheTypeRequiresSomething() {
		assertThat(shape(LooseOrderShipped.class).mismatch("{}")).isNull();
		assertThat(shape(OrderShipped.class).mismatch("{}"))
			.isEqualTo("it has no value for [trackingNumber, shippedAt], which the type requires. The payload has "
					+ "no property; the type reads [trackingNumber, shippedAt] and requires "
					+ "[trackingNumber, shippedAt]");
	}

	@Test
	void whatIsNotAnObjectIsLeftToJackson() {
		assertThat(shape(OrderShipped.class).mismatch("\"1Z999\"")).isNull();
		assertThat(shape(OrderShipped.class).mismatch("[1, 2]")).isNull();
		assertThat(shape(OrderShipped.class).mismatch("null")).isNull();
	}

	@Test
	void onlyTypesReadPropertyByPropertyHaveAShape() {
		for (java.lang.reflect.Type type : List.of(String.class, int.class, Long.class, Instant.class, UUID.class,
				Carrier.class, String[].class, JsonNode.class, Object.class, Wrapped.class, Typed.class,
				new ParameterizedTypeReference<List<OrderShipped>>() { }.getType(),
				new ParameterizedTypeReference<Map<String, Object>>() { }.getType())) {
			assertThat(PayloadShape.of(this.jsonMapper, this.jsonMapper.constructType(type))).as(type.getTypeName())
				.isNull();
		}
		PayloadShape optional = PayloadShape.of(this.jsonMapper,
				this.jsonMapper.constructType(new ParameterizedTypeReference<Optional<OrderShipped>>() { }.getType()));
		assertThat(optional.reads()).containsExactly("trackingNumber", "shippedAt");
	}

	@Test
	void aMessageNamesPropertiesButNeverValuesAndCutsLongLists() {
		Map<String, Object> payload = new HashMap<>();
		IntStream.range(0, 25).forEach((i) -> payload.put("field" + i, "4111-1111-1111-1111"));
		String json = this.jsonMapper.writeValueAsString(payload);

		String mismatch = shape(LooseOrderShipped.class).mismatch(json);

		assertThat(mismatch).contains(", and 5 more]").doesNotContain("4111");
		assertThat(Pattern.compile("field\\d+").matcher(mismatch).results()).hasSize(20);
	}

	private PayloadShape shape(Class<?> type) {
		PayloadShape shape = PayloadShape.of(this.jsonMapper, this.jsonMapper.constructType(type));
		assertThat(shape).as("shape of %s", type.getName()).isNotNull();
		return shape;
	}

	@NullMarked
	record OrderShipped(String trackingNumber, Instant shippedAt) {
	}

	@NullMarked
	record OrderShippedWithCarrier(String trackingNumber, Instant shippedAt, @Nullable String carrier) {
	}

	@NullUnmarked
	record LooseOrderShipped(String trackingNumber, Instant shippedAt) {
	}

	@NullUnmarked
	record Parcel(@NonNull String id, String label) {
	}

	@NullUnmarked
	static class Invoice {

		@JsonProperty(required = true)
		public String customer;

		public String note;

		private int amount;

		@JsonProperty(value = "amount", required = true)
		public void setAmount(int amount) {
			this.amount = amount;
		}

		public int amount() {
			return this.amount;
		}

	}

	@NullMarked
	record Counters(int count, boolean urgent, Optional<String> note, String name) {
	}

	@NullMarked
	record Envelope<T>(T body, String id) {
	}

	@NullMarked
	static class MarkedSettings {

		public String region = "eu-west";

	}

	@NullUnmarked
	record Renamed(@JsonProperty("tracking_no") String trackingNumber, @JsonAlias("shipped") Instant shippedAt) {
	}

	@NullUnmarked
	static class Attributes {

		public String name;

		private final Map<String, Object> others = new HashMap<>();

		@JsonAnySetter
		public void set(String key, Object value) {
			this.others.put(key, value);
		}

	}

	@NullUnmarked
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Tolerant(String trackingNumber) {
	}

	@NullUnmarked
	static class Shipment {

		public String id;

		@JsonUnwrapped
		public Address address;

	}

	@NullUnmarked
	static class Address {

		public String street;

		public String city;

	}

	/** Read through a type id: which properties it has depends on the id. */
	@NullUnmarked
	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
	record Typed(String trackingNumber) {
	}

	enum Carrier {

		UPS, DHL

	}

	/** Read from the whole payload through a delegating creator: its properties are not the payload's. */
	@NullUnmarked
	static final class Wrapped {

		private final Map<String, Object> values;

		@JsonCreator(mode = JsonCreator.Mode.DELEGATING)
		Wrapped(Map<String, Object> values) {
			this.values = values;
		}

		Map<String, Object> values() {
			return this.values;
		}

	}

}
