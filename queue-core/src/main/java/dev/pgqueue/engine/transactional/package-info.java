/**
 * Internal: transactional mode. A batch is claimed, run and completed in one transaction, first
 * optimistically behind one savepoint, then job by job behind a savepoint each when a job fails.
 */
@NullMarked
package dev.pgqueue.engine.transactional;

import org.jspecify.annotations.NullMarked;
