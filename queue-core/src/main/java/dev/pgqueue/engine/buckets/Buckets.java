package dev.pgqueue.engine.buckets;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

import org.jspecify.annotations.Nullable;

/** Which bucket a new job goes to. */
public final class Buckets {

	private Buckets() {
	}

	/**
	 * The bucket of a job: derived from its key, so that jobs with the same key land together, or
	 * random without one. A key maps to the same bucket in every JVM and every version (CRC-32C of its
	 * UTF-8 bytes), as long as the queue's bucket count stays the same.
	 * @param key the request's bucket key, or {@code null}
	 * @param count the queue's number of buckets
	 */
	public static int of(@Nullable String key, int count) {
		if (key == null) {
			return ThreadLocalRandom.current().nextInt(count);
		}
		CRC32C crc = new CRC32C();
		crc.update(key.getBytes(StandardCharsets.UTF_8));
		return (int) (crc.getValue() % count);
	}

}
