package dev.pgqueue.autoconfigure.docs;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import dev.pgqueue.autoconfigure.QueueEndpointProperties;
import dev.pgqueue.autoconfigure.QueueProperties;
import dev.pgqueue.autoconfigure.docs.Markdown.CodeBlock;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.helpers.DefaultHandler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.PropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.TextResourceOrigin;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.support.EncodedResource;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.jdbc.datasource.init.ScriptException;
import org.springframework.jdbc.datasource.init.ScriptUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The YAML, properties, SQL and XML blocks of README.md and docs/*.md are checked as what they claim
 * to be: a reader who copies one gets configuration that binds, SQL that runs and a dependency that
 * resolves. Java blocks are compiled elsewhere.
 *
 * <ul>
 * <li>{@code yaml}/{@code yml}/{@code properties}: loaded as Spring Boot loads
 * {@code application.yml} (or {@code .properties}) and bound in an application context that enables
 * {@link QueueProperties} and {@link QueueEndpointProperties}, as the starter does: a {@code pgqueue.*}
 * key that binds to nothing fails as it fails start-up, explained by the starter's own failure
 * analyzer. Every other key ({@code management.*}, {@code spring.*}, …) must be a key of the
 * configuration metadata of the test class path (Spring Boot's modules and the starter), or lie below
 * one whose type is a map; only the values of {@code management.endpoint.pgqueue.*} are bound as
 * well, since binding Spring Boot's own would take an application with each of its modules'
 * auto-configurations. A {@code ${NAME}} placeholder gets a dummy value.</li>
 * <li>{@code sql}: run statement by statement (auto-commit, as a reader runs them) on the tests'
 * PostgreSQL in a new schema, the only one on the search path, where pgqueue's migrations have run
 * when the block names a {@code pgqueue_} table. The schema is dropped afterwards, with everything
 * the block made in it, and so is each role the test created; nothing is rolled back, since the
 * migrations themselves cannot run in one transaction ({@code CREATE INDEX CONCURRENTLY}).</li>
 * <li>{@code xml}: well-formed inside a root element; each {@code dev.pgqueue} artifact is
 * {@code queue-bom} or a module it manages, and any other dependency without a version is one
 * Spring Boot's {@code spring-boot-dependencies} manages.</li>
 * </ul>
 *
 * <p>A block that is not meant to be taken as it stands says so in an HTML comment on the line right
 * above its opening fence, which GitHub does not show:
 * <ul>
 * <li>{@code <!-- block: not-config reason: … -->}: YAML or properties that is not an application's
 * configuration (an alert rule, a manifest); it must still parse.</li>
 * <li>{@code <!-- block: invalid-config reason: … -->}: configuration that is wrong on purpose (the
 * report of a misspelt key); it must fail to bind, as the text says it does.</li>
 * <li>{@code <!-- block: sql-fragment reason: … -->}: SQL with bound parameters or elisions; not
 * run.</li>
 * <li>{@code <!-- block: sql schema=app role=app_runtime restates=migrations -->}: the context a
 * runnable block needs, each option optional. {@code schema=NAME}: the block's schema, written NAME
 * in its text (the test's new schema stands in for it); {@code role=NAME[,NAME]}: roles the test
 * creates for it (under unique names standing in for these, since roles are shared by the whole
 * server); {@code restates=migrations}: the block's {@code CREATE INDEX} statements restate indexes
 * the migrations create, so the test drops those, runs the block and compares the definitions.</li>
 * </ul>
 * An unknown marker, a marker without a block right below it, a marker that does not fit the block's
 * language, or a fragment or not-config marker without a reason fails.
 */
class DocumentationBlocksTests {

	private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*block:\\s*(.*?)\\s*-->\\s*$");

	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}:]+)(?::[^}]*)?}");

	private static final Pattern CREATE_INDEX = Pattern.compile(
			"CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(?:CONCURRENTLY\\s+)?(?:IF\\s+NOT\\s+EXISTS\\s+)?([a-z_][a-z0-9_]*)",
			Pattern.CASE_INSENSITIVE);

	private static final Set<String> CONFIG_LANGUAGES = Set.of("yaml", "yml", "properties");

	private static final ConfigurationPropertyName PGQUEUE = ConfigurationPropertyName.of("pgqueue");

	private static final String HOW_TO_MARK = "If it is not meant to be taken as it stands, mark it on the line right "
			+ "above its opening fence (see DocumentationBlocksTests for the markers).";

	private static List<Located> blocks;

	private static List<String> markerProblems;

	@BeforeAll
	static void read() {
		blocks = new ArrayList<>();
		markerProblems = new ArrayList<>();
		for (Path file : Repository.documents()) {
			Markdown markdown = Markdown.read(file);
			Set<Integer> markerLines = new TreeSet<>();
			for (Markdown.Line line : markdown.prose()) {
				String text = line.text().strip();
				if (text.startsWith("<!--") && text.contains("block:")) {
					markerLines.add(line.number());
				}
			}
			for (CodeBlock block : markdown.codeBlocks()) {
				Marker marker = null;
				if (markerLines.remove(block.line() - 1)) {
					marker = Marker.parse(Repository.name(file), block, markerProblems);
				}
				blocks.add(new Located(Repository.name(file), block, marker));
			}
			for (int line : markerLines) {
				markerProblems.add(Repository.name(file) + ":" + line + ": a block marker with no fenced code block "
						+ "on the line right below it; put it right above the block's opening fence, or remove it");
			}
		}
	}

	@Test
	void everyMarkerIsKnownFitsItsBlockAndGivesItsReasons() {
		assertThat(blocks.stream().filter((block) -> block.marker() != null)).as("marked blocks").isNotEmpty();
		assertThat(markerProblems).as("block markers:%n%s%n", String.join(System.lineSeparator(), markerProblems))
			.isEmpty();
	}

	@Test
	void configurationBlocksBindAsTheApplicationBindsThem() throws Exception {
		MetadataKeys metadata = MetadataKeys.ofClassPath();
		List<String> problems = new ArrayList<>();
		int bound = 0;
		for (Located block : blocksOf(CONFIG_LANGUAGES)) {
			String kind = (block.marker() != null) ? block.marker().kind() : "config";
			List<PropertySource<?>> sources;
			try {
				sources = load(block);
			}
			catch (Exception ex) {
				problems.add(block.where() + " does not parse: " + ex.getMessage() + ". Fix the block.");
				continue;
			}
			if (kind.equals("not-config")) {
				continue;
			}
			List<String> found = new ArrayList<>();
			for (PropertySource<?> source : sources) {
				for (String key : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
					ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key, '.');
					if (!PGQUEUE.isAncestorOf(name) && !metadata.knows(name)) {
						found.add(block.at(source, key) + ": " + name + " is no key in the configuration metadata of "
								+ "Spring Boot or pgqueue. Fix the key. " + HOW_TO_MARK);
					}
				}
			}
			bound++;
			found.addAll(bind(block, sources));
			if (kind.equals("invalid-config")) {
				if (found.isEmpty()) {
					problems.add(block.where() + " is marked invalid-config but binds: fix the text around it, or "
							+ "remove the marker");
				}
			}
			else {
				problems.addAll(found);
			}
		}
		assertThat(bound).as("configuration blocks bound").isGreaterThan(10);
		assertThat(problems).as("configuration blocks that do not bind:%n%s%n",
				String.join(System.lineSeparator(), problems))
			.isEmpty();
	}

	@Test
	void sqlBlocksRunOnPostgresql() throws Exception {
		List<String> problems = new ArrayList<>();
		int ran = 0;
		for (Located block : blocksOf(Set.of("sql"))) {
			if (block.marker() != null && block.marker().kind().equals("sql-fragment")) {
				continue;
			}
			ran++;
			problems.addAll(run(block));
		}
		assertThat(ran).as("SQL blocks run").isGreaterThan(3);
		assertThat(problems).as("SQL blocks that do not run:%n%s%n", String.join(System.lineSeparator(), problems))
			.isEmpty();
	}

	@Test
	void xmlBlocksAreWellFormedAndNameManagedArtifacts() throws Exception {
		Set<String> bomModules = bomModules();
		Set<String> springBootManaged = springBootManaged();
		List<String> problems = new ArrayList<>();
		int dependencies = 0;
		for (Located block : blocksOf(Set.of("xml"))) {
			Document document;
			try {
				String text = block.block().text().replaceFirst("^\\s*<\\?xml[^>]*\\?>", "");
				document = documentBuilder()
					.parse(new ByteArrayInputStream(("<block>" + text + "</block>").getBytes(StandardCharsets.UTF_8)));
			}
			catch (Exception ex) {
				problems.add(block.where() + " is not well-formed XML (wrapped in one root element): " + ex.getMessage()
						+ ". Fix the block.");
				continue;
			}
			NodeList found = document.getElementsByTagName("dependency");
			for (int i = 0; i < found.getLength(); i++) {
				dependencies++;
				Element dependency = (Element) found.item(i);
				String groupId = child(dependency, "groupId");
				String artifactId = child(dependency, "artifactId");
				String version = child(dependency, "version");
				String coordinates = groupId + ":" + artifactId;
				if ("dev.pgqueue".equals(groupId)) {
					if (!artifactId.equals("queue-bom") && !bomModules.contains(artifactId)) {
						problems.add(block.where() + ": " + coordinates + " is no module of pgqueue's BOM (queue-bom "
								+ "manages " + String.join(", ", bomModules) + "). Fix the artifactId.");
					}
				}
				else if (version == null && !springBootManaged.contains(coordinates)) {
					problems.add(block.where() + ": " + coordinates + " has no version and spring-boot-dependencies "
							+ SpringBootVersion.getVersion() + " does not manage it (BOMs it imports are not read). "
							+ "Give it a version, or fix the coordinates.");
				}
			}
		}
		assertThat(dependencies).as("dependencies in XML blocks").isGreaterThan(4);
		assertThat(problems).as("XML blocks:%n%s%n", String.join(System.lineSeparator(), problems)).isEmpty();
	}

	private static List<Located> blocksOf(Set<String> languages) {
		return blocks.stream().filter((block) -> languages.contains(block.block().language())).toList();
	}

	// Configuration

	private static List<PropertySource<?>> load(Located block) throws Exception {
		PropertySourceLoader loader = block.block().language().equals("properties")
				? new PropertiesPropertySourceLoader() : new YamlPropertySourceLoader();
		// Blank lines up to the block's first line, so that the origins of its keys are lines of the document.
		String text = "\n".repeat(block.block().line()) + block.block().text();
		return loader.load(block.where(), resource(text, block.file()));
	}

	/** A resource of text whose description, as origins and script failures show it, is just this. */
	private static ByteArrayResource resource(String text, String description) {
		return new ByteArrayResource(text.getBytes(StandardCharsets.UTF_8)) {

			@Override
			public String getDescription() {
				return description;
			}

		};
	}

	/**
	 * Binds the block's keys as an application's start-up binds them, with the starter's failure
	 * analyzers explaining a failure: the problems found, each naming the line of the key.
	 */
	private static List<String> bind(Located block, List<PropertySource<?>> sources) {
		Map<String, Object> dummies = new LinkedHashMap<>();
		Matcher placeholder = PLACEHOLDER.matcher(block.block().text());
		while (placeholder.find()) {
			dummies.put(placeholder.group(1), "dummy-" + placeholder.group(1).toLowerCase(Locale.ROOT));
		}
		List<String> problems = new ArrayList<>();
		new ApplicationContextRunner().withInitializer((context) -> {
			sources.forEach(context.getEnvironment().getPropertySources()::addFirst);
			context.getEnvironment().getPropertySources().addLast(new MapPropertySource("placeholders", dummies));
		}).withUserConfiguration(BindProperties.class).run((context) -> {
			Throwable failure = context.getStartupFailure();
			if (failure != null) {
				problems.add(describe(block, failure));
			}
		});
		return problems;
	}

	private static String describe(Located block, Throwable failure) {
		List<String> lines = new ArrayList<>();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof UnboundConfigurationPropertiesException unbound) {
				for (ConfigurationProperty property : unbound.getUnboundProperties()) {
					lines.add(block.at(property.getOrigin()) + ": " + property.getName());
				}
			}
			else if (cause instanceof BindException bind && bind.getProperty() != null) {
				lines.add(block.at(bind.getProperty().getOrigin()) + ": " + bind.getProperty().getName());
			}
		}
		String where = lines.isEmpty() ? block.where() : String.join(", ", lines);
		FailureAnalysis analysis = analyze(failure);
		String explanation = (analysis != null)
				? analysis.getDescription().strip() + System.lineSeparator() + "    Action: " + analysis.getAction()
				: rootCause(failure).toString();
		return where + " does not bind:" + System.lineSeparator() + "    " + explanation.replace("\n", "\n    ")
				+ System.lineSeparator() + "    Fix the block. " + HOW_TO_MARK;
	}

	/** pgqueue's failure analyzers, loaded as Spring Boot loads them. */
	private static FailureAnalysis analyze(Throwable failure) {
		return SpringFactoriesLoader.forDefaultResourceLocation(DocumentationBlocksTests.class.getClassLoader())
			.load(FailureAnalyzer.class, (factoryType, factoryImplementationName, ex) -> {
			})
			.stream()
			.filter((analyzer) -> analyzer.getClass().getName().startsWith("dev.pgqueue"))
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(java.util.Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ QueueProperties.class, QueueEndpointProperties.class })
	static class BindProperties {

	}

	/**
	 * The keys of every {@code META-INF/spring-configuration-metadata.json} on the class path: Spring
	 * Boot's modules that the starter's tests depend on (actuator, web, data sources, …) and the
	 * starter's own.
	 */
	record MetadataKeys(Set<String> names, Set<String> maps) {

		static MetadataKeys ofClassPath() throws Exception {
			Set<String> names = new HashSet<>();
			Set<String> maps = new HashSet<>();
			JsonMapper mapper = JsonMapper.builder().build();
			List<URL> files = Collections.list(DocumentationBlocksTests.class.getClassLoader()
				.getResources("META-INF/spring-configuration-metadata.json"));
			for (URL url : files) {
				try (InputStream in = url.openStream()) {
					for (JsonNode property : mapper.readTree(in).path("properties")) {
						String name = property.get("name").asString();
						names.add(name);
						JsonNode type = property.get("type");
						if (type != null && type.asString().startsWith("java.util.Map<")) {
							maps.add(name);
						}
					}
				}
			}
			assertThat(names).as("keys in the configuration metadata of the class path")
				.contains("management.endpoints.web.exposure.include", "spring.datasource.url");
			return new MetadataKeys(names, maps);
		}

		boolean knows(ConfigurationPropertyName name) {
			String key = name.toString().replaceAll("\\[\\d+]$", "");
			if (this.names.contains(key)) {
				return true;
			}
			for (ConfigurationPropertyName parent = name.getParent(); !parent.isEmpty(); parent = parent.getParent()) {
				if (this.maps.contains(parent.toString())) {
					return true;
				}
			}
			return false;
		}

	}

	// SQL

	private static List<String> run(Located block) throws SQLException {
		Marker marker = block.marker();
		String text = block.block().text();
		TestDatabase database = TestDatabase.get();
		Map<String, String> standIns = new LinkedHashMap<>();
		List<String> roles = new ArrayList<>();
		try (TestSchema schema = database.createSchema("docs_sql")) {
			try (Connection admin = database.connect(); Statement statement = admin.createStatement()) {
				if (marker != null && marker.options().containsKey("schema")) {
					standIns.put(marker.options().get("schema"), schema.name());
				}
				if (marker != null && marker.options().containsKey("role")) {
					for (String role : marker.options().get("role").split(",")) {
						String standIn = ("docs_" + role.strip() + "_"
								+ UUID.randomUUID().toString().replace("-", "").substring(0, 8)).toLowerCase(Locale.ROOT);
						statement.execute("CREATE ROLE " + standIn + " NOLOGIN");
						roles.add(standIn);
						standIns.put(role.strip(), standIn);
					}
				}
			}
			for (Map.Entry<String, String> standIn : standIns.entrySet()) {
				text = text.replaceAll("(?<![\\w.$\"])" + Pattern.quote(standIn.getKey()) + "(?![\\w$\"])",
						standIn.getValue());
			}
			boolean restates = marker != null && "migrations".equals(marker.options().get("restates"));
			if (restates || text.toLowerCase(Locale.ROOT).contains("pgqueue_")) {
				new QueueMigrator(schema.dataSource(), SchemaName.of(schema.name()), true).migrate();
			}
			Map<String, String> migrated = restates ? dropRestatedIndexes(block, text, schema) : Map.of();
			if (migrated == null) {
				return List.of(block.where() + " is marked restates=migrations but has no CREATE INDEX of an index "
						+ "the migrations create. Fix the block or its marker.");
			}
			try (Connection connection = schema.dataSource().getConnection()) {
				ScriptUtils.executeSqlScript(connection, new EncodedResource(resource(text, block.file())));
			}
			catch (ScriptException ex) {
				String context = standIns.isEmpty() ? "" : " (run with " + standIns + " standing in)";
				return List.of(block.where() + " fails" + context + ": " + rootCause(ex).getMessage()
						+ System.lineSeparator() + "    " + ex.getMessage() + System.lineSeparator()
						+ "    Fix the statement. " + HOW_TO_MARK);
			}
			List<String> problems = new ArrayList<>();
			for (Map.Entry<String, String> index : migrated.entrySet()) {
				String restated = indexDefinition(schema, index.getKey());
				if (!index.getValue().equals(restated)) {
					problems.add(block.where() + ": index " + index.getKey() + " differs from the migrations':"
							+ System.lineSeparator() + "    block:      " + restated + System.lineSeparator()
							+ "    migrations: " + index.getValue() + System.lineSeparator()
							+ "    Make the block state what queue-core's dev/pgqueue/schema/migration creates.");
				}
			}
			return problems;
		}
		finally {
			if (!roles.isEmpty()) {
				try (Connection admin = database.connect(); Statement statement = admin.createStatement()) {
					for (String role : roles) {
						statement.execute("DROP OWNED BY " + role);
						statement.execute("DROP ROLE " + role);
					}
				}
			}
		}
	}

	/**
	 * The definitions the migrations gave the indexes the block creates, by name, after dropping them
	 * so the block can create them again; null when the block creates none of them.
	 */
	private static Map<String, String> dropRestatedIndexes(Located block, String text, TestSchema schema)
			throws SQLException {
		Map<String, String> migrated = new LinkedHashMap<>();
		Matcher create = CREATE_INDEX.matcher(text);
		while (create.find()) {
			String definition = indexDefinition(schema, create.group(1));
			if (definition != null) {
				migrated.put(create.group(1), definition);
			}
		}
		if (migrated.isEmpty()) {
			return null;
		}
		try (Connection connection = schema.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			for (String index : migrated.keySet()) {
				statement.execute("DROP INDEX " + index);
			}
		}
		return migrated;
	}

	private static String indexDefinition(TestSchema schema, String index) throws SQLException {
		try (Connection connection = schema.dataSource().getConnection();
				PreparedStatement query = connection
					.prepareStatement("SELECT indexdef FROM pg_indexes WHERE schemaname = ? AND indexname = ?")) {
			query.setString(1, schema.name());
			query.setString(2, index);
			try (ResultSet rows = query.executeQuery()) {
				return rows.next() ? rows.getString(1) : null;
			}
		}
	}

	// XML

	private static DocumentBuilder documentBuilder() throws Exception {
		DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
		factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
		factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
		DocumentBuilder builder = factory.newDocumentBuilder();
		builder.setErrorHandler(new DefaultHandler());
		return builder;
	}

	private static String child(Element element, String name) {
		NodeList children = element.getElementsByTagName(name);
		return (children.getLength() > 0) ? children.item(0).getTextContent().strip() : null;
	}

	/** The artifactIds of dev.pgqueue that queue-bom/pom.xml manages. */
	private static Set<String> bomModules() throws Exception {
		Document bom = documentBuilder().parse(Repository.root().resolve("queue-bom/pom.xml").toFile());
		Set<String> modules = new TreeSet<>();
		for (Element dependency : managedDependencies(bom)) {
			String groupId = child(dependency, "groupId");
			if ("dev.pgqueue".equals(groupId) || "${project.groupId}".equals(groupId)) {
				modules.add(child(dependency, "artifactId"));
			}
		}
		assertThat(modules).as("modules queue-bom manages").contains("queue-spring-boot-starter");
		return modules;
	}

	/**
	 * The groupId:artifactId pairs that spring-boot-dependencies manages itself, read from its pom in
	 * the local Maven repository beside the Spring Boot jar of the class path.
	 */
	private static Set<String> springBootManaged() throws Exception {
		String version = SpringBootVersion.getVersion();
		Path jar = Path.of(SpringBootVersion.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		// <repository>/org/springframework/boot/spring-boot/<version>/spring-boot-<version>.jar
		Path pom = jar.getParent().getParent().getParent().resolve("spring-boot-dependencies/" + version
				+ "/spring-boot-dependencies-" + version + ".pom");
		assertThat(pom).as("spring-boot-dependencies' pom in the local Maven repository (the build imports it)")
			.exists();
		Set<String> managed = new HashSet<>();
		for (Element dependency : managedDependencies(documentBuilder().parse(Files.newInputStream(pom)))) {
			managed.add(child(dependency, "groupId") + ":" + child(dependency, "artifactId"));
		}
		assertThat(managed).as("dependencies spring-boot-dependencies manages")
			.contains("org.springframework.boot:spring-boot-starter-jdbc");
		return managed;
	}

	private static List<Element> managedDependencies(Document pom) {
		List<Element> dependencies = new ArrayList<>();
		NodeList management = pom.getElementsByTagName("dependencyManagement");
		for (int i = 0; i < management.getLength(); i++) {
			NodeList found = ((Element) management.item(i)).getElementsByTagName("dependency");
			for (int j = 0; j < found.getLength(); j++) {
				dependencies.add((Element) found.item(j));
			}
		}
		return dependencies;
	}

	// Blocks and markers

	/** A code block of a document, with its marker, if any. */
	record Located(String file, CodeBlock block, Marker marker) {

		String where() {
			return this.file + ":" + this.block.line() + " (the " + this.block.language() + " block opening there)";
		}

		/** Where a key of the block's property source was set, as a line of the document. */
		@SuppressWarnings("unchecked")
		String at(PropertySource<?> source, String key) {
			Origin origin = (source instanceof OriginLookup<?>) ? ((OriginLookup<String>) source).getOrigin(key) : null;
			return at(origin);
		}

		String at(Origin origin) {
			for (Origin current = origin; current != null; current = (current instanceof PropertySourceOrigin source)
					? source.getOrigin() : current.getParent()) {
				if (current instanceof TextResourceOrigin text && text.getLocation() != null) {
					return this.file + ":" + (text.getLocation().getLine() + 1) + " (in the " + this.block.language()
							+ " block opening at line " + this.block.line() + ")";
				}
			}
			return where();
		}

	}

	/**
	 * A marker comment: its kind, its options and its reason.
	 */
	record Marker(String kind, Map<String, String> options, String reason) {

		private static final Map<String, Set<String>> LANGUAGES = Map.of("not-config", CONFIG_LANGUAGES,
				"invalid-config", CONFIG_LANGUAGES, "sql-fragment", Set.of("sql"), "sql", Set.of("sql"));

		private static final Set<String> NEED_A_REASON = Set.of("not-config", "invalid-config", "sql-fragment");

		private static final Map<String, Set<String>> OPTIONS = Map.of("sql", Set.of("schema", "role", "restates"));

		static Marker parse(String file, CodeBlock block, List<String> problems) {
			String where = file + ":" + (block.line() - 1);
			Matcher matcher = MARKER.matcher(block.lineAbove());
			if (!matcher.matches()) {
				problems.add(where + ": a block marker must read <!-- block: KIND [OPTION=VALUE …] [reason: …] -->");
				return null;
			}
			String body = matcher.group(1);
			String reason = null;
			int reasonStart = body.indexOf("reason:");
			if (reasonStart >= 0) {
				reason = body.substring(reasonStart + "reason:".length()).strip();
				body = body.substring(0, reasonStart).strip();
			}
			String[] words = body.isEmpty() ? new String[] { "" } : body.split("\\s+");
			String kind = words[0];
			if (!LANGUAGES.containsKey(kind)) {
				problems.add(where + ": unknown block marker '" + kind + "'; the markers are "
						+ new TreeSet<>(LANGUAGES.keySet()));
				return null;
			}
			if (!LANGUAGES.get(kind).contains(block.language())) {
				problems.add(where + ": a '" + kind + "' marker is for " + new TreeSet<>(LANGUAGES.get(kind))
						+ " blocks, and the block below it is " + block.language());
			}
			if (NEED_A_REASON.contains(kind) && (reason == null || reason.isEmpty())) {
				problems.add(where + ": a '" + kind + "' marker gives its reason: <!-- block: " + kind
						+ " reason: why the block is not to be taken as it stands -->");
			}
			Map<String, String> options = new LinkedHashMap<>();
			for (int i = 1; i < words.length; i++) {
				String[] option = words[i].split("=", 2);
				Set<String> known = OPTIONS.getOrDefault(kind, Set.of());
				if (option.length != 2 || !known.contains(option[0]) || option[1].isEmpty()) {
					problems.add(where + ": '" + words[i] + "' is no option of a '" + kind + "' marker"
							+ (known.isEmpty() ? " (it has none)" : "; its options are " + new TreeSet<>(known)
									+ ", each NAME=VALUE"));
				}
				else {
					options.put(option[0], option[1]);
				}
			}
			if (options.containsKey("restates") && !options.get("restates").equals("migrations")) {
				problems.add(where + ": restates=" + options.get("restates") + " is not known; only restates=migrations");
			}
			return new Marker(kind, options, reason);
		}

	}

}
