package dev.pgqueue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on the loopback interface that forwards bytes to a server until told to
 * {@link #freeze()}: from then on the connections open at that moment forward nothing in either
 * direction, and stay open, as after a failover that leaves a socket half-open. Connections made
 * after the freeze are forwarded as usual, so that a client can reconnect through the proxy.
 */
final class FreezingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final InetSocketAddress target;

	private final List<Link> links = new CopyOnWriteArrayList<>();

	private final AtomicInteger accepted = new AtomicInteger();

	private final Thread acceptor;

	private volatile boolean closed;

	FreezingProxy(String host, int port) throws IOException {
		this.target = new InetSocketAddress(host, port);
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.acceptor = new Thread(this::accept, "freezing-proxy");
		this.acceptor.setDaemon(true);
		this.acceptor.start();
	}

	/** The port clients connect to. */
	int port() {
		return this.server.getLocalPort();
	}

	/** Connections accepted so far. */
	int accepted() {
		return this.accepted.get();
	}

	/** Stops forwarding on every connection open now, without closing any. */
	void freeze() {
		this.links.forEach((link) -> link.frozen = true);
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket();
				upstream.connect(this.target, 5_000);
				Link link = new Link(client, upstream);
				this.links.add(link);
				this.accepted.incrementAndGet();
				pump(link, client.getInputStream(), upstream.getOutputStream(), "up");
				pump(link, upstream.getInputStream(), client.getOutputStream(), "down");
			}
			catch (IOException ex) {
				if (!this.closed) {
					throw new IllegalStateException("The proxy could not accept or connect: " + ex, ex);
				}
			}
		}
	}

	private void pump(Link link, InputStream from, OutputStream to, String direction) {
		Thread pump = new Thread(() -> {
			byte[] buffer = new byte[8192];
			try {
				int read;
				while ((read = from.read(buffer)) >= 0) {
					if (link.frozen) {
						// Neither forward these bytes nor read any more: the peer hears nothing, and no
						// socket closes, until the proxy does.
						link.closing.await();
						return;
					}
					to.write(buffer, 0, read);
					to.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// The link closed.
			}
			link.close();
		}, "freezing-proxy-" + direction);
		pump.setDaemon(true);
		pump.start();
	}

	@Override
	public void close() throws IOException {
		this.closed = true;
		this.server.close();
		this.links.forEach(Link::close);
	}

	/** A client's connection and the proxy's to the server. */
	private static final class Link {

		final Socket client;

		final Socket upstream;

		final CountDownLatch closing = new CountDownLatch(1);

		volatile boolean frozen;

		Link(Socket client, Socket upstream) {
			this.client = client;
			this.upstream = upstream;
		}

		void close() {
			this.closing.countDown();
			try {
				this.client.close();
				this.upstream.close();
			}
			catch (IOException ex) {
				// Closed already.
			}
		}

	}

}
