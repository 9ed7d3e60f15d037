package dev.pgqueue.engine.limits;

/**
 * A limit's group: the queue, a kind or a concurrency key, with the 32-bit key of its advisory
 * locks and its number of slots. Equal by type and name.
 */
record Group(Type type, String name, int key, int limit) {

	enum Type {

		QUEUE, KIND, KEY

	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Group group && group.type == this.type && group.name.equals(this.name);
	}

	@Override
	public int hashCode() {
		return this.type.hashCode() * 31 + this.name.hashCode();
	}

}
