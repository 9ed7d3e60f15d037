// The imports of the README quick start's SignupService.java.
import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
