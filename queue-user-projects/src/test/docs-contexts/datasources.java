// Two pools in a configuration class: the application's and the queue's.
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.autoconfigure.QueueDataSource;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

abstract class Context {

}
