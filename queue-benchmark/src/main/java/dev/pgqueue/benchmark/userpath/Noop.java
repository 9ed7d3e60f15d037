package dev.pgqueue.benchmark.userpath;

/**
 * The payload of the user-path workload's jobs, mapped by Jackson as any user's record would be.
 * The harness preloads it as {@code {"account": "acct-00000001", "n": 1}}.
 *
 * @param account an account reference, as real payloads carry one
 * @param n the job's number
 */
public record Noop(String account, int n) {

}
