package dev.pgqueue.testkit;

import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.testkit.KitTestApplication.Greeting;
import dev.pgqueue.testkit.KitTestApplication.Listeners;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * With queues spread over shards, the tester sees and runs the jobs of every shard: two shards, the
 * first on the application's DataSource in the test class's schema, the second on a pool of its own in
 * a schema of its own, as on a second server.
 */
@SpringBootTest(classes = { KitTestApplication.class, QueueTesterShardsTests.SecondShard.class },
		properties = { "pgqueue.enabled=false", "pgqueue.shards.s1.data-source=dataSource",
				"pgqueue.shards.s2.data-source=kitSecondShard",
				"pgqueue.shards.s2.schema=" + QueueTesterShardsTests.SECOND_SCHEMA })
@QueueTestDatabase
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class QueueTesterShardsTests {

	static final String SECOND_SCHEMA = "pgqueue_kit_second_shard";

	private static volatile JdbcTemplate second;

	@Autowired
	private QueueTester queue;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private Listeners listeners;

	@Autowired
	private QueueEngine engine;

	@BeforeEach
	void startEmpty() {
		this.jdbc.execute(KitTestApplication.CREATE_GREETINGS);
		this.jdbc.update("DELETE FROM greetings");
		for (String shard : this.engine.shards().names()) {
			for (String table : List.of("pgqueue_jobs", "pgqueue_finished_jobs")) {
				this.engine.database(shard).jobs().jdbcTemplate()
					.update("DELETE FROM " + this.engine.database(shard).settings().schema().qualify(table));
			}
		}
		this.listeners.greetingThreads.clear();
		second = this.engine.database("s2").jobs().jdbcTemplate();
	}

	@AfterAll
	static void dropSecondSchema() {
		if (second != null) {
			second.execute("DROP SCHEMA IF EXISTS " + SECOND_SCHEMA + " CASCADE");
		}
	}

	@Test
	void assertsOnAndDrainsTheJobsOfEveryShard() {
		this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("ada")).shard("s1"));
		this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("grace")).shard("s2"));
		this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("chain")).shard("s2"));

		this.queue.assertThatJobs().ofKind("greeting.send").hasSize(3);
		JobRuns runs = this.queue.drain("mail");

		// The chained greeting, enqueued without a key by a listener, lands on either shard; the drain
		// goes round the shards until none has a due job.
		assertThat(runs.completed()).as("%s", runs).isEqualTo(4);
		assertThat(this.listeners.greetingThreads).containsOnlyKeys("ada", "grace", "chain", "chained")
			.allSatisfy((name, thread) -> assertThat(thread).isSameAs(Thread.currentThread()));
		this.queue.assertThatJobs().ofKind("greeting.send").allCompleted();
	}

	@Test
	void runsAJobOfTheSecondShardByIdAndAwaitIdleNamesItWhileItWaits() {
		UUID onSecond = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("hedy")).shard("s2"));
		assertThat(this.engine.shards().shardOf(onSecond)).contains("s2");

		assertThatThrownBy(this.queue::awaitIdle).isInstanceOf(AssertionError.class)
			.hasMessageContaining(onSecond.toString());
		JobRun run = this.queue.run(onSecond);

		assertThat(run.completed()).as("%s", run).isTrue();
		assertThat(this.listeners.greetingThreads).containsOnlyKeys("hedy");
		this.queue.awaitIdle();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class SecondShard {

		@Bean(defaultCandidate = false)
		DataSource kitSecondShard(DataSourceProperties properties) {
			return properties.initializeDataSourceBuilder().build();
		}

	}

}
