package dev.pgqueue.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;

/**
 * The account an embedded server runs as: the JVM's own, or, when the JVM runs as root (which
 * PostgreSQL refuses), an unprivileged one that {@code setpriv} switches to for each command.
 */
final class ServerAccount {

	private final String name;

	private final List<String> runAs;

	private ServerAccount(String name, List<String> runAs) {
		this.name = name;
		this.runAs = runAs;
	}

	static ServerAccount current() {
		if (!isRoot()) {
			return new ServerAccount(null, List.of());
		}
		String name = System.getProperty(EmbeddedPostgresServer.ACCOUNT_PROPERTY,
				EmbeddedPostgresServer.DEFAULT_ACCOUNT);
		String uid = id(name, "-u");
		String gid = id(name, "-g");
		if ("0".equals(uid)) {
			throw new IllegalStateException("The embedded PostgreSQL cannot run as '" + name
					+ "', which is root: name an unprivileged account in -D" + EmbeddedPostgresServer.ACCOUNT_PROPERTY);
		}
		return new ServerAccount(name,
				List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--"));
	}

	/** The command prefix that runs a program as this account (empty for the JVM's own). */
	List<String> runAs() {
		return this.runAs;
	}

	/** A new, private directory for one server, owned by this account. */
	Path createHome() {
		try {
			Path home = Files.createTempDirectory("pgqueue-postgres-");
			if (this.name != null) {
				UserPrincipal owner = home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(this.name);
				Files.setOwner(home, owner);
				Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwx------"));
			}
			return home;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create a directory for an embedded PostgreSQL under "
					+ System.getProperty("java.io.tmpdir") + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Writes a file only this account can read: the JVM's own account, or the server's, which is given
	 * the file.
	 */
	void writePrivate(Path file, String content) {
		try {
			Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
			Files.writeString(file, content, StandardCharsets.UTF_8);
			if (this.name != null) {
				Files.setOwner(file, file.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(this.name));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not write " + file + " for an embedded PostgreSQL: " + ex.getMessage(),
					ex);
		}
	}

	private static boolean isRoot() {
		if (System.getProperty("os.name").toLowerCase().contains("win")) {
			return false;
		}
		try {
			return "0".equals(output(List.of("id", "-u")));
		}
		catch (IllegalStateException ex) {
			return "root".equals(System.getProperty("user.name"));
		}
	}

	private static String id(String account, String option) {
		try {
			return output(List.of("id", option, account));
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException("PostgreSQL refuses to run as root, so the embedded server runs as '"
					+ account + "', but " + ex.getMessage() + ". Name an existing unprivileged account in -D"
					+ EmbeddedPostgresServer.ACCOUNT_PROPERTY + ", or run the build as a user other than root.", ex);
		}
	}

	private static String output(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			if (process.waitFor() != 0) {
				throw new IllegalStateException("'" + String.join(" ", command) + "' failed: " + output);
			}
			return output;
		}
		catch (IOException ex) {
			throw new IllegalStateException("'" + String.join(" ", command) + "' could not run: " + ex.getMessage(),
					ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted", ex);
		}
	}

}
