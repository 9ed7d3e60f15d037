package dev.pgqueue.benchmark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * CPU-bound processes beside a workload, as other builds on a shared machine are: each a shell busy
 * loop ({@code sh -c 'while :; do :; done'}) that takes a core whenever the scheduler lets it. Started
 * and stopped by the workload; closing kills them.
 */
final class CpuNeighbours implements AutoCloseable {

	private final List<Process> loops = new ArrayList<>();

	private CpuNeighbours() {
	}

	/** Starts {@code count} busy loops (none for 0). */
	static CpuNeighbours start(int count) throws IOException {
		CpuNeighbours neighbours = new CpuNeighbours();
		if (count > 0) {
			// Also when the run is interrupted: the loops would outlive it.
			Runtime.getRuntime().addShutdownHook(new Thread(neighbours::close, "neighbours-stop"));
		}
		try {
			for (int i = 0; i < count; i++) {
				neighbours.loops.add(new ProcessBuilder("sh", "-c", "while :; do :; done")
					.redirectOutput(ProcessBuilder.Redirect.DISCARD)
					.redirectError(ProcessBuilder.Redirect.DISCARD)
					.start());
			}
		}
		catch (IOException ex) {
			neighbours.close();
			throw ex;
		}
		return neighbours;
	}

	int count() {
		return this.loops.size();
	}

	@Override
	public void close() {
		for (Process loop : this.loops) {
			loop.destroyForcibly();
		}
		for (Process loop : this.loops) {
			try {
				loop.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
