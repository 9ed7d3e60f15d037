package dev.pgqueue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/** Records the SQL of every statement prepared through it, to say exactly what the engine runs. */
final class StatementRecorder extends DelegatingDataSource {

	private final List<String> statements = new CopyOnWriteArrayList<>();

	StatementRecorder(DataSource target) {
		super(target);
	}

	/** The statements prepared so far, in order. */
	List<String> statements() {
		return this.statements;
	}

	/** Forgets the statements prepared so far. */
	void clear() {
		this.statements.clear();
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection target = super.getConnection();
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					if (method.getName().startsWith("prepare") && args != null && args[0] instanceof String sql) {
						this.statements.add(sql);
					}
					try {
						return method.invoke(target, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getTargetException();
					}
				});
	}

}
