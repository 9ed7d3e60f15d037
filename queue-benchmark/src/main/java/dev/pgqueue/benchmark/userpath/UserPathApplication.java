package dev.pgqueue.benchmark.userpath;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The pgqueue side of the user-path workload: a Spring Boot application with the starter, Actuator
 * and a Prometheus registry, whose one {@code @JobListener} takes a record mapped from the job's
 * JSON and counts it. Everything else is configured the way a user would, with properties that the
 * harness passes on the command line ({@code spring.datasource.*}, {@code pgqueue.*}).
 *
 * <p>The harness ({@code UserPathWorkload}) runs it in a JVM of its own, so that its CPU time is its
 * own, and drives it through stdin and stdout with {@link DrainProtocol}.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class UserPathApplication {

	/** Kind of every job of the workload. */
	public static final String KIND = "bench.noop";

	/** Queue of every job of the workload: the benchmark's own queue name. */
	public static final String QUEUE = "bench";

	public static void main(String[] args) {
		ConfigurableApplicationContext context = null;
		int status = 0;
		try {
			// No web server: nothing here is served, but Actuator's metrics are on all the same (a
			// MeterRegistry bean, pgqueue's meters registered and recorded on every job).
			context = new SpringApplicationBuilder(UserPathApplication.class).web(WebApplicationType.NONE)
				.bannerMode(Banner.Mode.OFF)
				.properties(Map.of("spring.application.name", "pgqueue-user-path"))
				.run(args);
			BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			new DrainProtocol(context, commands, System.out).run();
		}
		catch (Throwable ex) {
			// The harness reads stdout; the stack trace goes to stderr, which it keeps in a log file.
			System.out.println(DrainProtocol.PREFIX + "FAILED " + ex.toString().replace('\n', ' '));
			System.out.flush();
			ex.printStackTrace();
			status = 1;
		}
		finally {
			if (context != null) {
				context.close();
			}
		}
		System.exit(status);
	}

}
