/**
 * The pgqueue test kit, for the tests of an application that uses pgqueue (add
 * {@code queue-test-kit} with test scope): {@link dev.pgqueue.testkit.QueueTester} waits until the
 * queues are idle, runs jobs on the test thread and asserts on the jobs in the table, and
 * {@link dev.pgqueue.testkit.IsolatedQueueSchema} gives a test class a pgqueue schema of its own.
 */
@NullMarked
package dev.pgqueue.testkit;

import org.jspecify.annotations.NullMarked;
