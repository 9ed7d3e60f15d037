package dev.pgqueue.engine.sql;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code trace_context} column: the trace headers of a job's enqueue (such as W3C
 * {@code traceparent} and {@code tracestate}) as a JSON object of strings, or null when the enqueue
 * was not traced.
 */
final class TraceContextColumn {

	private static final Logger logger = LoggerFactory.getLogger(TraceContextColumn.class);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
	};

	private TraceContextColumn() {
	}

	/** The column's value for these headers: null for none. */
	static @Nullable String write(Map<String, String> headers) {
		return (headers == null || headers.isEmpty()) ? null : JSON.writeValueAsString(headers);
	}

	/**
	 * The headers of a column's value; empty for null. A value that is not a JSON object of strings
	 * (written by hand) is ignored: the job runs in a new trace rather than not at all.
	 */
	static Map<String, String> read(@Nullable String column) {
		if (column == null) {
			return Map.of();
		}
		try {
			Map<String, String> headers = JSON.readValue(column, HEADERS);
			return (headers != null) ? headers : Map.of();
		}
		catch (JacksonException ex) {
			logger.debug("Ignoring a trace_context that is not a JSON object of strings: {}", ex.getOriginalMessage());
			return Map.of();
		}
	}

}
