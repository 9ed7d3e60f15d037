package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.metrics.VacuumHealth;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard and alert rules in {@code docs/} query series that pgqueue's metrics really export to
 * Prometheus, and every alert says what it means in {@code docs/alerts.md}.
 */
class MonitoringFilesTests {

	private static final Path DOCS = Path.of("..", "docs");

	private static final Pattern SERIES = Pattern.compile("pgqueue_[a-z_]+");

	@Test
	void dashboardAndAlertsQueryOnlySeriesThatPgqueueExports() throws IOException {
		Set<String> exported = exportedSeries();
		Set<String> queried = new TreeSet<>();
		queried.addAll(seriesIn(Files.readString(DOCS.resolve("prometheus-alerts.yml"))));
		queried.addAll(seriesIn(Files.readString(DOCS.resolve("grafana-dashboard.json"))));

		assertThat(queried).as("series the files query").isNotEmpty();
		assertThat(exported).as("series pgqueue exports").containsAll(queried);
	}

	@Test
	void everyAlertSaysWhatItMeansInTheAlertsPage() throws IOException {
		String page = Files.readString(DOCS.resolve("alerts.md"));
		List<Map<String, Object>> rules = rules();

		assertThat(rules).isNotEmpty().allSatisfy((rule) -> {
			String name = (String) rule.get("alert");
			@SuppressWarnings("unchecked")
			Map<String, String> annotations = (Map<String, String>) rule.get("annotations");
			assertThat(annotations).as(name).containsKeys("summary", "description");
			assertThat(annotations.get("description")).as(name).contains("docs/alerts.md#" + name.toLowerCase());
			assertThat(page).as("a section of alerts.md for " + name).contains("\n## " + name + "\n");
		});
	}

	@Test
	void dashboardPanelsEachQuerySomething() throws IOException {
		JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DOCS.resolve("grafana-dashboard.json")));

		assertThat(dashboard.get("title").asString()).isEqualTo("pgqueue");
		List<JsonNode> panels = dashboard.get("panels").valueStream()
			.filter((panel) -> !"row".equals(panel.get("type").asString()))
			.toList();
		assertThat(panels).isNotEmpty().allSatisfy((panel) -> {
			assertThat(panel.get("description").asString()).as(panel.get("title").asString()).isNotBlank();
			assertThat(panel.get("targets").valueStream().map((target) -> target.get("expr").asString()))
				.as(panel.get("title").asString())
				.isNotEmpty()
				.allSatisfy((expr) -> assertThat(expr).contains("pgqueue_"));
		});
	}

	/** Every meter registered, by calling every method of the metrics once, as Prometheus scrapes them. */
	private static Set<String> exportedSeries() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		MicrometerQueueMetrics metrics = new MicrometerQueueMetrics(registry, List.of("mail"));
		metrics.pollCycle("mail", 2_000_000, 5);
		metrics.unproductiveClaim("mail");
		metrics.slaMissed("mail", 1);
		metrics.pollCycleAssessed("mail", Duration.ofMillis(2), PollCycleAssessment.HEALTHY);
		for (JobOutcome outcome : JobOutcome.values()) {
			metrics.jobFinished("mail", "email.send", outcome, 1_000_000);
		}
		metrics.jobTimedOut("mail", "email.send");
		metrics.abandonedHandlers("mail", 0);
		metrics.jobRescued("mail", "email.send");
		metrics.queueStats(List.of(new QueueStats("mail", 1, 1, 1, Duration.ofSeconds(1))));
		metrics.oldestTransaction(OldestTransaction.NONE);
		metrics.lockWaits(0);
		metrics.preparedTransactions(PreparedTransactions.NONE);
		metrics.inDoubtResolved("mail", "committed");
		metrics.scheduleFired("nightly", 1, Duration.ofMillis(300));
		metrics.scheduleSkipped("nightly", "missed", 2);
		metrics.serviceFailed("promoter");
		metrics.vacuumHealth(new VacuumHealth("public.pgqueue_jobs", true, true, true, 0, 0, null, List.of()));
		return registry.scrape()
			.lines()
			.filter((line) -> !line.startsWith("#") && !line.isBlank())
			.map((line) -> line.split("[{ ]", 2)[0])
			.collect(Collectors.toCollection(TreeSet::new));
	}

	private static Set<String> seriesIn(String text) {
		Set<String> series = new TreeSet<>();
		Matcher matcher = SERIES.matcher(text);
		while (matcher.find()) {
			series.add(matcher.group());
		}
		return series;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> rules() throws IOException {
		Map<String, Object> file = new Yaml().load(Files.readString(DOCS.resolve("prometheus-alerts.yml")));
		List<Map<String, Object>> groups = (List<Map<String, Object>>) file.get("groups");
		return groups.stream().flatMap((group) -> ((List<Map<String, Object>>) group.get("rules")).stream()).toList();
	}

}
