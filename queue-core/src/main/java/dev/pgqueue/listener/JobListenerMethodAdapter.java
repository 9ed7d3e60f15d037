package dev.pgqueue.listener;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.time.Duration;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.Job;
import dev.pgqueue.JobContext;
import dev.pgqueue.JobListener;
import dev.pgqueue.NonRetryableJobException;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Adapts a {@link JobListener @JobListener} method to {@link JobHandler}: maps the payload to the
 * method's payload parameter with Jackson, passes the {@link Job} where asked, unwraps what the
 * method throws, and hands on the {@link ExternalEffect} it returns, if it returns one.
 *
 * <p>A payload that does not fit the parameter's type fails its job at once, before the method runs:
 * one Jackson cannot read, a JSON {@code null} for a parameter that is not an {@code Optional}, and one
 * the type's {@code PayloadShape} tells apart as written for another type or lacking a property the
 * type requires.
 */
public class JobListenerMethodAdapter implements JobHandler {

	private static final Logger logger = LoggerFactory.getLogger(JobListenerMethodAdapter.class);

	private final String kind;

	private final String queue;

	private final int maxRunning;

	private final @Nullable Duration timeout;

	private final @Nullable RateLimit rateLimit;

	private final int rateWeight;

	private final Object bean;

	private final Method method;

	/** Reads payloads of the listener's type; built once, so no job looks its deserializer up. */
	private final @Nullable ObjectReader payloadReader;

	private final int payloadIndex;

	private final @Nullable JavaType payloadType;

	/** What a payload must be to fit the payload type; {@code null} when Jackson alone decides. */
	private final @Nullable PayloadShape payloadShape;

	private final Class<?>[] parameterTypes;

	/** Writes what the method returns as the job's output; {@code null} when it returns nothing to keep. */
	private final @Nullable ObjectWriter outputWriter;

	/**
	 * @param bean the bean (or its proxy) to invoke
	 * @param method the method to invoke on it, already made invocable on the bean's class
	 * @param annotation the method's annotation
	 * @param jsonMapper the application's mapper
	 * @throws IllegalStateException when the method's parameters do not fit
	 */
	public JobListenerMethodAdapter(Object bean, Method method, JobListener annotation, JsonMapper jsonMapper) {
		this.kind = annotation.kind();
		this.queue = annotation.queue();
		this.bean = bean;
		this.method = method;
		if (this.kind.isBlank()) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has a blank kind",
					"Give it a stable name such as kind = \"email.welcome\".");
		}
		if (annotation.maxRunning() < 0) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has maxRunning "
					+ annotation.maxRunning(), "Give 1 or more, or leave maxRunning out for no limit.");
		}
		this.maxRunning = annotation.maxRunning();
		this.timeout = parseTimeout(method, annotation.timeout());
		this.rateLimit = parseRateLimit(method, annotation.rateLimit());
		if (annotation.rateWeight() < 1) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has rateWeight "
					+ annotation.rateWeight(), "Give 1 or more: the units of each rate limit one job uses.");
		}
		this.rateWeight = annotation.rateWeight();
		if (this.queue.isBlank()) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has a blank queue",
					"Name a queue, or leave queue out to use the default queue.");
		}
		int payload = -1;
		Type[] types = method.getGenericParameterTypes();
		for (int i = 0; i < types.length; i++) {
			if (method.getParameterTypes()[i] == Job.class || method.getParameterTypes()[i] == JobContext.class) {
				continue;
			}
			if (payload >= 0) {
				throw new InvalidJobListenerException("@JobListener method " + describe(method) + " takes more than "
						+ "one payload parameter", "Take the payload and, optionally, the Job and the JobContext; nothing "
								+ "else.");
			}
			payload = i;
		}
		long jobParameters = java.util.Arrays.stream(method.getParameterTypes()).filter((t) -> t == Job.class).count();
		if (jobParameters > 1) {
			throw new InvalidJobListenerException("@JobListener method " + describe(method) + " takes the Job twice",
					"Take the Job once.");
		}
		long contextParameters = java.util.Arrays.stream(method.getParameterTypes())
			.filter((t) -> t == JobContext.class)
			.count();
		if (contextParameters > 1) {
			throw new InvalidJobListenerException("@JobListener method " + describe(method)
					+ " takes the JobContext twice", "Take the JobContext once.");
		}
		if (types.length == 0) {
			throw new InvalidJobListenerException("@JobListener method " + describe(method) + " takes no parameter",
					"Take the payload, the Job, or both.");
		}
		this.payloadIndex = payload;
		this.payloadType = (payload >= 0) ? jsonMapper.constructType(types[payload]) : null;
		this.payloadReader = (payload >= 0) ? jsonMapper.readerFor(this.payloadType) : null;
		this.payloadShape = (payload >= 0) ? PayloadShape.of(jsonMapper, this.payloadType) : null;
		Class<?> returned = method.getReturnType();
		this.outputWriter = (returned == void.class || returned == Void.class
				|| ExternalEffect.class.isAssignableFrom(returned)) ? null
						: jsonMapper.writerFor(jsonMapper.constructType(method.getGenericReturnType()));
		this.parameterTypes = method.getParameterTypes();
		ReflectionUtils.makeAccessible(method);
	}

	@Override
	public String kind() {
		return this.kind;
	}

	@Override
	public String queue() {
		return this.queue;
	}

	@Override
	public int maxRunning() {
		return this.maxRunning;
	}

	@Override
	public @Nullable Duration timeout() {
		return this.timeout;
	}

	@Override
	public @Nullable RateLimit rateLimit() {
		return this.rateLimit;
	}

	@Override
	public int rateWeight() {
		return this.rateWeight;
	}

	private static @Nullable RateLimit parseRateLimit(Method method, String text) {
		try {
			return RateLimit.parse(text);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has rateLimit '" + text
					+ "': " + ex.getMessage(), "Write it as \"<starts>/<period>\", such as \"100/1m\" or \"10/1s\", "
							+ "with at least 1 start and a period of 50ms or more.");
		}
	}

	private static @Nullable Duration parseTimeout(Method method, String text) {
		if (text.isBlank()) {
			return null;
		}
		Duration timeout;
		try {
			timeout = DurationFormatterUtils.detectAndParse(text.strip());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has timeout '" + text
					+ "', which is not a duration", "Write it as \"30s\", \"5m\" or \"PT30S\".");
		}
		if (timeout.isZero() || timeout.isNegative()) {
			throw new InvalidJobListenerException("@JobListener on " + describe(method) + " has timeout '" + text
					+ "', which is not positive", "Give a positive duration, or leave timeout out for the queue's.");
		}
		return timeout;
	}

	/** Type the payload is mapped to, or {@code null} when the method takes only the Job. */
	public @Nullable JavaType payloadType() {
		return this.payloadType;
	}

	@Override
	public void handle(Job job) throws Throwable {
		invoke(job);
	}

	@Override
	public @Nullable ExternalEffect handleForEffect(Job job) throws Throwable {
		Object returned = invoke(job);
		// Whatever else a method returns is ignored, as it always was.
		return (returned instanceof ExternalEffect effect) ? effect : null;
	}

	/**
	 * Runs the listener and hands on what it returned: an {@link ExternalEffect}, or any other value
	 * written as JSON with the application's mapper, to be stored as the job's output. A value the
	 * mapper cannot write fails the attempt for good (the same value would fail again), naming the job,
	 * the kind and the type.
	 */
	@Override
	public Returned handleForResult(Job job) throws Throwable {
		return handleForResult(job, null);
	}

	@Override
	public Returned handleForResult(Job job, @Nullable JobContext context) throws Throwable {
		Object returned = invoke(job, context);
		if (returned instanceof ExternalEffect effect) {
			return new Returned(effect, null);
		}
		if (returned == null || this.outputWriter == null) {
			return Returned.NOTHING;
		}
		try {
			return new Returned(null, this.outputWriter.writeValueAsString(returned));
		}
		catch (JacksonException ex) {
			logger.debug("Output of job {} could not be written as JSON", job.id(), ex);
			throw new NonRetryableJobException("Job " + job.id() + " of kind '" + job.kind() + "' in queue '"
					+ job.queue() + "' returned a " + returned.getClass().getName() + ", which Jackson cannot write as "
					+ "JSON (" + ex.getClass().getSimpleName() + "), so its output could not be stored and the job "
					+ "was not completed. Return a type Jackson can write, or return nothing from "
					+ describe(this.method));
		}
	}

	/** Whether the method is declared to return an {@link ExternalEffect}. */
	@Override
	public boolean hasExternalEffect() {
		return ExternalEffect.class.isAssignableFrom(this.method.getReturnType());
	}

	private @Nullable Object invoke(Job job) throws Throwable {
		return invoke(job, null);
	}

	private @Nullable Object invoke(Job job, @Nullable JobContext context) throws Throwable {
		Object[] arguments = new Object[this.method.getParameterCount()];
		Class<?>[] types = this.parameterTypes;
		for (int i = 0; i < arguments.length; i++) {
			if (i == this.payloadIndex) {
				arguments[i] = readPayload(job);
			}
			else if (types[i] == JobContext.class) {
				arguments[i] = (context != null) ? context : new Detached(job);
			}
			else {
				arguments[i] = job;
			}
		}
		try {
			return this.method.invoke(this.bean, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

	private Object readPayload(Job job) {
		Object payload;
		try {
			// Jackson would read a payload of another type as an object of nulls: tell it apart first.
			String mismatch = (this.payloadShape != null) ? this.payloadShape.mismatch(job.payload()) : null;
			if (mismatch != null) {
				throw new PayloadMappingException(doesNotMap(job) + ": " + mismatch
						+ ". Fix the producer or the payload type; retrying cannot help.");
			}
			payload = this.payloadReader.readValue(job.payload());
		}
		catch (JacksonException ex) {
			// Jackson's messages quote the offending values: keep them out of logs and last_error, which
			// must not carry payload data. Debug logging shows them to those who opt in.
			logger.debug("Payload of job {} does not map to {}", job.id(), this.payloadType, ex);
			String path = ex.getPathReference();
			throw new PayloadMappingException(doesNotMap(job) + ": " + ex.getClass().getSimpleName()
					+ ((path != null && !path.isEmpty()) ? " at " + path : "")
					+ ". Fix the producer or the payload type; retrying cannot help.");
		}
		if (payload == null) {
			throw new PayloadMappingException("Payload of job " + job.id() + " (kind '" + job.kind() + "', queue '"
					+ job.queue() + "') is null, but " + describe(this.method) + " takes a "
					+ this.payloadType.toCanonical() + ". Enqueue a value, or let the listener take only the Job.");
		}
		return payload;
	}

	private String doesNotMap(Job job) {
		return "Payload of job " + job.id() + " (kind '" + job.kind() + "', queue '" + job.queue()
				+ "') does not map to " + this.payloadType.toCanonical() + " taken by " + describe(this.method);
	}

	@Override
	public String description() {
		return describe(this.method);
	}

	static String describe(Method method) {
		return method.getDeclaringClass().getName() + "." + method.getName() + "("
				+ java.util.Arrays.stream(method.getParameterTypes())
					.map(Class::getSimpleName)
					.collect(java.util.stream.Collectors.joining(", "))
				+ ")";
	}

	/**
	 * The context of a job run outside the engine's runner (a test calling the handler directly):
	 * never cancelled, its progress kept nowhere.
	 */
	private record Detached(Job job) implements JobContext {

		@Override
		public boolean isCancellationRequested() {
			return false;
		}

		@Override
		public void progress(int percent, @Nullable String message) {
		}

	}

	/** The payload of a job does not map to its listener's parameter type; never retried. */
	public static class PayloadMappingException extends NonRetryableJobException {

		private static final long serialVersionUID = 1L;

		PayloadMappingException(String message) {
			super(message);
		}

	}

}
