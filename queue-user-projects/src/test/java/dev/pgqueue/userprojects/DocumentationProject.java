package dev.pgqueue.userprojects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.pgqueue.userprojects.JavaBlock.Kind;
import org.jspecify.annotations.Nullable;

/**
 * One project of a user's own that holds every {@code ```java} block of the documentation, each in a
 * package of its own (or the one it declares) with a copy of its context, and that maps what javac
 * reports back to the Markdown line (or the context's line) it comes from.
 */
final class DocumentationProject {

	/** Where the contexts that fragments name live, relative to the repository's root. */
	static final String CONTEXTS = "queue-user-projects/src/test/docs-contexts";

	private static final Pattern IMPORT = Pattern.compile("^import\\s+[\\w.*\\s]+;\\s*$");

	private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;\\s*$");

	/** A context's line that copies a file of the README's quick start into the block's package. */
	private static final Pattern WITH_QUICK_START = Pattern.compile("^//\\s*with the README quick start's (\\S+)\\s*$");

	private static final Pattern TOP_LEVEL_TYPE = Pattern
		.compile("^(public\\s+)?(?:(?:final|abstract|sealed|non-sealed)\\s+)*(?:class|record|interface|enum|@interface)\\s+(\\w+)");

	/** Libraries only a project's tests have: a block that uses them compiles with the tests. */
	private static final List<String> TEST_LIBRARIES = List.of("org.junit.", "org.assertj.", "dev.pgqueue.testkit.",
			"org.springframework.boot.test.", "org.springframework.test.", "org.testcontainers.",
			"org.springframework.boot.testcontainers.");

	private static final Pattern BODY_PLACEHOLDER = Pattern.compile("\\{\\s*(?:\\.\\.\\.|…)\\s*\\}");

	private static final Pattern LINE_PLACEHOLDER = Pattern.compile("^\\s*(?:\\.\\.\\.|…);?\\s*$");

	private static final Pattern TYPE_BEFORE = Pattern.compile("\\b(?:class|record|interface|enum)\\s+\\w+");

	/** {@code [ERROR] /path/File.java:[line,column] message}, as Maven prints javac's errors. */
	private static final Pattern JAVAC_ERROR = Pattern.compile("^\\[ERROR\\] (/\\S+\\.java):\\[(\\d+),(\\d+)\\] (.*)$");

	/** What javac adds below an error ({@code symbol:}, {@code location:}), indented, as is or after {@code [ERROR]}. */
	private static final Pattern JAVAC_DETAIL = Pattern.compile("^(?:\\[ERROR\\] {2,}|\\s+)\\S.*$");

	private final Path root;

	private final Map<String, String> quickStart;

	private final List<JavaBlock> readmeBlocks;

	/** Generated files by their path in the project. */
	private final Map<String, GeneratedFile> files = new LinkedHashMap<>();

	private final List<String> problems = new ArrayList<>();

	DocumentationProject(Path root, Map<String, String> quickStart, List<JavaBlock> readmeBlocks) {
		this.root = root;
		this.quickStart = quickStart;
		this.readmeBlocks = readmeBlocks;
	}

	/** What kept a block from being put into the project: unknown contexts, placeholders where none are allowed. */
	List<String> problems() {
		return this.problems;
	}

	Map<String, GeneratedFile> files() {
		return this.files;
	}

	/** Puts one block, and its context, into the project. */
	void add(JavaBlock block) throws IOException {
		JavaBlock.Marker marker = block.marker();
		Kind kind = (marker != null) ? marker.kind() : Kind.UNIT;
		List<String> code = withoutPlaceholders(block, marker != null && marker.placeholders());
		if (code == null) {
			return;
		}
		String declared = declaredPackage(code);
		if (declared != null && kind != Kind.UNIT) {
			this.problems.add(block.where() + ": a " + kind.name().toLowerCase(Locale.ROOT) + " block declares package "
					+ declared + "; only a unit may: mark it unit, or leave the package out");
			return;
		}
		String pkg = (declared != null) ? declared : block.ownPackage();
		Context context = null;
		if (marker != null && marker.context() != null) {
			context = context(block, marker.context(), kind);
			if (context == null) {
				return;
			}
		}
		GeneratedFile file = new GeneratedFile(block);
		int start = 0;
		if (declared == null) {
			file.add("package " + pkg + ";", null);
		}
		else {
			while (!PACKAGE.matcher(code.get(start).trim()).matches()) {
				start++;
			}
			file.addBlock(code, 0, ++start);
		}
		if (context != null) {
			context.imports().forEach((line) -> file.add(line, null));
		}
		switch (kind) {
			case UNIT -> file.addBlock(code, start, code.size());
			case MEMBERS -> {
				file.add("class Block extends Context {", null);
				file.addBlock(code, 0, code.size());
				file.add("}", null);
			}
			case STATEMENTS -> {
				file.add("class Block extends Context {", null);
				file.add("void run() throws Exception {", null);
				file.addBlock(code, 0, code.size());
				file.add("}", null);
				file.add("}", null);
			}
		}
		boolean test = usesTestLibraries(file.lines) || (context != null && usesTestLibraries(context.lines()));
		String dir = (test ? "src/test/java/" : "src/main/java/") + pkg.replace('.', '/') + "/";
		String name = (kind == Kind.UNIT) ? typeName(code) : "Block";
		put(dir + name + ".java", file, block);
		if (context != null) {
			GeneratedFile copy = new GeneratedFile(block);
			copy.add("package " + pkg + ";", null);
			for (int i = 0; i < context.lines().size(); i++) {
				copy.add(context.lines().get(i), new Origin(CONTEXTS + "/" + context.name() + ".java", i + 1));
			}
			put(dir + "DocsContext.java", copy, block);
			for (String path : context.quickStartFiles()) {
				put(dir + Path.of(path).getFileName(), quickStartCopy(block, path, pkg), block);
			}
		}
	}

	private void put(String path, GeneratedFile file, JavaBlock block) {
		GeneratedFile other = this.files.putIfAbsent(path, file);
		if (other != null) {
			this.problems.add(block.where() + ": its code goes to " + path + ", as the code of " + other.block.where()
					+ " does; give one of them a package of its own (or none, for one made up of its file and line)");
		}
	}

	/** The block's code with its placeholders replaced by code that compiles, or {@code null} if it may not have any. */
	private @Nullable List<String> withoutPlaceholders(JavaBlock block, boolean allowed) {
		List<String> code = new ArrayList<>();
		for (int i = 0; i < block.code().size(); i++) {
			String line = block.code().get(i);
			Matcher body = BODY_PLACEHOLDER.matcher(line);
			boolean lone = LINE_PLACEHOLDER.matcher(line).matches();
			if ((body.find() || lone) && !allowed) {
				this.problems.add(block.file() + ":" + block.lineOf(i) + ": a placeholder ('...' or '…' as a body or a "
						+ "line) in the block of " + block.where() + ", which does not allow them: write code there, or "
						+ "add 'placeholders' to its marker (" + JavaBlock.Marker.SYNTAX + ")");
				return null;
			}
			if (lone) {
				line = "";
			}
			else {
				body.reset();
				StringBuilder replaced = new StringBuilder();
				while (body.find()) {
					boolean typeBody = TYPE_BEFORE.matcher(line.substring(0, body.start())).find();
					body.appendReplacement(replaced, typeBody ? "{ }" : "{ throw new UnsupportedOperationException(); }");
				}
				body.appendTail(replaced);
				line = replaced.toString();
			}
			code.add(line);
		}
		return code;
	}

	private @Nullable Context context(JavaBlock block, String name, Kind kind) throws IOException {
		Path file = this.root.resolve(CONTEXTS).resolve(name + ".java");
		if (!name.matches("[\\w-]+") || !Files.isRegularFile(file)) {
			this.problems.add(block.where() + ": unknown context '" + name + "' in the marker before this block: no file "
					+ CONTEXTS + "/" + name + ".java; create it (imports, an abstract class Context with the fields and "
					+ "methods the block refers to, stub types) or name an existing one");
			return null;
		}
		List<String> lines = Files.readAllLines(file);
		List<String> imports = lines.stream().filter((line) -> IMPORT.matcher(line).matches()).toList();
		List<String> quickStartFiles = new ArrayList<>();
		for (String line : lines) {
			Matcher with = WITH_QUICK_START.matcher(line.trim());
			if (with.matches()) {
				if (!this.quickStart.containsKey(with.group(1))) {
					this.problems.add(CONTEXTS + "/" + name + ".java: the README's quick start prints no file "
							+ with.group(1) + "; it prints " + this.quickStart.keySet());
					return null;
				}
				quickStartFiles.add(with.group(1));
			}
		}
		if (kind != Kind.UNIT && lines.stream().noneMatch((line) -> line.matches("^(abstract\\s+)?class Context\\b.*"))) {
			this.problems.add(block.where() + ": the context '" + name + "' declares no top-level class Context, which the "
					+ "class a " + kind.name().toLowerCase(Locale.ROOT) + " block is wrapped in extends; declare one in " + file);
			return null;
		}
		return new Context(name, lines, imports, quickStartFiles);
	}

	/** A file of the quick start, in the block's package, mapped to the README's lines. */
	private GeneratedFile quickStartCopy(JavaBlock block, String path, String pkg) {
		String content = this.quickStart.get(path);
		JavaBlock printed = this.readmeBlocks.stream()
			.filter((candidate) -> (String.join("\n", candidate.code()) + "\n").equals(content))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No ```java block of README.md prints " + path));
		GeneratedFile copy = new GeneratedFile(block);
		for (int i = 0; i < printed.code().size(); i++) {
			String line = printed.code().get(i);
			copy.add(PACKAGE.matcher(line).matches() ? "package " + pkg + ";" : line,
					new Origin(printed.file(), printed.lineOf(i)));
		}
		return copy;
	}

	private static @Nullable String declaredPackage(List<String> code) {
		for (String line : code) {
			Matcher matcher = PACKAGE.matcher(line.trim());
			if (matcher.matches()) {
				return matcher.group(1);
			}
		}
		return null;
	}

	/** The file's name: the public top-level type's, else the first top-level type's. */
	private static String typeName(List<String> code) {
		String first = null;
		for (String line : code) {
			Matcher matcher = TOP_LEVEL_TYPE.matcher(line);
			if (matcher.find()) {
				if (matcher.group(1) != null) {
					return matcher.group(2);
				}
				first = (first != null) ? first : matcher.group(2);
			}
		}
		return (first != null) ? first : "Block";
	}

	private static boolean usesTestLibraries(List<String> lines) {
		return lines.stream()
			.filter((line) -> line.startsWith("import "))
			.anyMatch((line) -> TEST_LIBRARIES.stream().anyMatch(line::contains));
	}

	/** Writes the pom and every file into the project. */
	void writeTo(UserProject project) {
		project.write("pom.xml", pom());
		this.files.forEach((path, file) -> project.write(path, String.join("\n", file.lines) + "\n"));
	}

	/**
	 * javac's errors in Maven's output, each mapped to the line of the Markdown (or of a context) it
	 * comes from, with the lines javac adds (symbol, location).
	 */
	List<String> errors(UserProject project, String output) {
		// Maven prints each error twice: where javac reports it, and again in the build's failure.
		Map<String, String> errors = new LinkedHashMap<>();
		String[] lines = output.split("\n");
		for (int i = 0; i < lines.length; i++) {
			Matcher error = JAVAC_ERROR.matcher(lines[i].stripTrailing());
			if (!error.matches()) {
				continue;
			}
			StringBuilder detail = new StringBuilder(error.group(4));
			while (i + 1 < lines.length && JAVAC_DETAIL.matcher(lines[i + 1]).matches()) {
				detail.append("\n        ").append(lines[++i].replaceFirst("^\\[ERROR\\]", "").trim());
			}
			String path = project.dir().relativize(Path.of(error.group(1))).toString().replace('\\', '/');
			int line = Integer.parseInt(error.group(2));
			GeneratedFile file = this.files.get(path);
			if (file == null) {
				errors.merge(error.group(1) + error.group(2) + error.group(3) + error.group(4), path + ":" + line + ": " + detail,
						DocumentationProject::longer);
				continue;
			}
			Origin origin = (line - 1 < file.origins.size()) ? file.origins.get(line - 1) : null;
			JavaBlock block = file.block;
			String how = (block.marker() != null) ? "marked " + describe(block.marker())
					: block.declaresImportsOrPackage() ? "a complete compilation unit (it has no marker)"
							: "without a marker, so compiled as a complete compilation unit; if it is a fragment, put "
									+ JavaBlock.Marker.SYNTAX + " on the line before its fence";
			String at = (origin != null) ? origin.file() + ":" + origin.line() : block.where() + " (code the test wraps it in)";
			errors.merge(error.group(1) + error.group(2) + error.group(3) + error.group(4),
					at + ": " + detail + "\n    in the ```java block of " + block.where() + ", " + how + "; generated as "
							+ path + ":" + line,
					DocumentationProject::longer);
		}
		return new ArrayList<>(errors.values());
	}

	private static String longer(String one, String other) {
		return (other.length() > one.length()) ? other : one;
	}

	private static String describe(JavaBlock.Marker marker) {
		return "'" + marker.kind().name().toLowerCase(Locale.ROOT) + ((marker.context() != null) ? " context=" + marker.context() : "")
				+ (marker.placeholders() ? " placeholders" : "") + "'";
	}

	/**
	 * The project's pom: Spring Boot's parent and the BOM, as the quick start has them, with what the
	 * blocks use: the starter, a pool, the Spring Modulith adapter, the test kit, Testcontainers.
	 */
	static String pom() {
		return UserProject.bootPom("documentation", """
				  <dependencyManagement>
				    <dependencies>
				      <dependency>
				        <groupId>dev.pgqueue</groupId>
				        <artifactId>queue-bom</artifactId>
				        <version>%s</version>
				        <type>pom</type>
				        <scope>import</scope>
				      </dependency>
				    </dependencies>
				  </dependencyManagement>
				  <dependencies>
				    <dependency>
				      <groupId>dev.pgqueue</groupId>
				      <artifactId>queue-spring-boot-starter</artifactId>
				    </dependency>
				    <dependency>
				      <groupId>org.springframework.boot</groupId>
				      <artifactId>spring-boot-starter-jdbc</artifactId>
				    </dependency>
				    <dependency>
				      <groupId>dev.pgqueue</groupId>
				      <artifactId>queue-modulith</artifactId>
				    </dependency>
				    <dependency>
				      <groupId>dev.pgqueue</groupId>
				      <artifactId>queue-test-kit</artifactId>
				      <scope>test</scope>
				    </dependency>
				    <dependency>
				      <groupId>org.springframework.boot</groupId>
				      <artifactId>spring-boot-starter-test</artifactId>
				      <scope>test</scope>
				    </dependency>
				    <dependency>
				      <groupId>org.springframework.boot</groupId>
				      <artifactId>spring-boot-testcontainers</artifactId>
				      <scope>test</scope>
				    </dependency>
				    <dependency>
				      <groupId>org.testcontainers</groupId>
				      <artifactId>testcontainers-postgresql</artifactId>
				      <scope>test</scope>
				    </dependency>
				  </dependencies>
				""".formatted(UserProject.VERSION));
	}

	/** A line of the documentation, or of a context. */
	record Origin(String file, int line) {
	}

	private record Context(String name, List<String> lines, List<String> imports, List<String> quickStartFiles) {
	}

	/** A file of the project, each line with where it comes from ({@code null}: code the test wraps a block in). */
	static final class GeneratedFile {

		private final JavaBlock block;

		private final List<String> lines = new ArrayList<>();

		private final List<@Nullable Origin> origins = new ArrayList<>();

		GeneratedFile(JavaBlock block) {
			this.block = block;
		}

		JavaBlock block() {
			return this.block;
		}

		void add(String line, @Nullable Origin origin) {
			this.lines.add(line);
			this.origins.add(origin);
		}

		void addBlock(List<String> code, int from, int to) {
			for (int i = from; i < to; i++) {
				add(code.get(i), new Origin(this.block.file(), this.block.lineOf(i)));
			}
		}

	}

}
