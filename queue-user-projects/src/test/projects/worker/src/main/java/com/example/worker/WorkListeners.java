package com.example.worker;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

record Work(long millis) {}

@Component
class WorkListeners {

    private static final Logger logger = LoggerFactory.getLogger(WorkListeners.class);

    @JobListener(kind = "work.transactional", queue = "transactional")
    void transactional(Work work, Job job) throws InterruptedException {
        work(work, job);
    }

    @JobListener(kind = "work.leased", queue = "leased")
    void leased(Work work, Job job) throws InterruptedException {
        work(work, job);
    }

    private void work(Work work, Job job) throws InterruptedException {
        logger.info("Job {} started", job.id());
        Thread.sleep(work.millis());
        logger.info("Job {} done", job.id());
    }
}
