// A listener that writes to the database of its job's shard.
import java.math.BigDecimal;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import dev.pgqueue.QueueShards;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

record Posting(String account, BigDecimal amount) {
}
