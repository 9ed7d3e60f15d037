// Spring Modulith: a customizer of the job an externalized event becomes.
import dev.pgqueue.modulith.ExternalizedJobCustomizer;
import org.springframework.context.annotation.Bean;

abstract class Context {

}

record OrderPlaced(String orderId, String customerId) {
}
