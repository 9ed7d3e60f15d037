package dev.pgqueue;

/**
 * Who is asking for a {@link JobAdmin} operation, as its log line names them. With Spring Security
 * on the class path, the starter names the authenticated user of the current thread; define a bean
 * of this type to name callers otherwise.
 */
@FunctionalInterface
public interface AdminCaller {

	/** Names every caller {@code system}: the default without Spring Security. */
	AdminCaller SYSTEM = () -> "system";

	/** The name of whoever asks on the current thread, for the log. */
	String name();

}
