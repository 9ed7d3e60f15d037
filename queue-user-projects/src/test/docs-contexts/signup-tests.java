// Tests of the README quick start's application: its SignupService.java, the test kit, and a test
// class's fields.
// with the README quick start's src/main/java/com/example/signup/SignupService.java
import dev.pgqueue.testkit.AutoConfigureQueueTester;
import dev.pgqueue.testkit.IsolatedQueueSchema;
import dev.pgqueue.testkit.QueueTestDatabase;
import dev.pgqueue.testkit.QueueTester;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.transaction.annotation.Transactional;

abstract class Context {

	@Autowired
	SignupService signups;

	@Autowired
	QueueTester queue;

}
