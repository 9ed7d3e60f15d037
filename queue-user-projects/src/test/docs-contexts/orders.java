// Spring Modulith: an event published in a transaction, and the order it is about.
import dev.pgqueue.JobListener;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.modulith.events.Externalized;
import org.springframework.transaction.annotation.Transactional;

abstract class Context {

	OrderRepository orders;

	ApplicationEventPublisher events;

}

record Order(String id, String customerId) {
}

interface OrderRepository {

	void save(Order order);

}
