package dev.pgqueue.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the figures were measured on: they mean little without it. */
final class Environment {

	private Environment() {
	}

	static Map<String, Object> read(BenchDatabase database) {
		Map<String, Object> environment = new LinkedHashMap<>();
		environment.put("cpus", Runtime.getRuntime().availableProcessors());
		environment.put("cpuModel", firstValue("/proc/cpuinfo", "model name"));
		String memory = firstValue("/proc/meminfo", "MemTotal");
		environment.put("memory", (memory != null) ? memory.replaceAll("\\s+", " ") : null);
		environment.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
		environment.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		environment.put("postgresql", database.serverVersion());
		environment.put("jdbcUrl", database.jdbcUrl().replaceAll("password=[^&]*", "password=***"));
		environment.put("loadAverageAtStart", loadAverage());
		return environment;
	}

	/** The 1, 5 and 15 minute load averages, which show whether something else shared the machine. */
	static String loadAverage() {
		try {
			String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
			return parts[0] + " " + parts[1] + " " + parts[2];
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	private static String firstValue(String file, String key) {
		try {
			List<String> lines = Files.readAllLines(Path.of(file));
			for (String line : lines) {
				if (line.startsWith(key)) {
					return line.substring(line.indexOf(':') + 1).trim();
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// Not Linux: the figure stays unknown.
		}
		return null;
	}

}
