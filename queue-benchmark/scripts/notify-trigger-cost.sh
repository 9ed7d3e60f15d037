#!/usr/bin/env bash
# What pgqueue.notifications.trigger costs an insert: pgbench inserts due jobs by plain SQL into a
# jobs table migrated as pgqueue migrates it, with the notify trigger disabled and enabled in turn.
#
#   PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=mydb queue-benchmark/scripts/notify-trigger-cost.sh [rounds] [seconds] [clients]
#
# Connects with psql/pgbench's usual PG* variables; works in a schema of its own, dropped at the end.
# Each round runs both settings (which goes first alternates), each for the given seconds; prints
# per-setting transactions per second and mean latency: median, min and max over the rounds. Two
# scripts: one row per INSERT statement (the trigger notifies once per statement), and 100 rows per
# statement (still one notification).
set -euo pipefail

rounds=${1:-5}
seconds=${2:-10}
clients=${3:-1}
schema=pgqueue_trigger_cost_$$
migrations="$(cd "$(dirname "$0")/../../queue-core/src/main/resources/dev/pgqueue/schema/migration" && pwd)"
work=$(mktemp -d)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=error"
trap 'psql -qX -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null; rm -rf "$work"' EXIT

psql -qX -v ON_ERROR_STOP=1 -c "CREATE SCHEMA $schema" >/dev/null
for file in $(ls "$migrations"/V*.sql | sort -V); do
	PGOPTIONS="$PGOPTIONS -c search_path=$schema" psql -qX -v ON_ERROR_STOP=1 -f "$file" >/dev/null
done

cat > "$work/one.sql" <<SQL
INSERT INTO $schema.pgqueue_jobs (public_id, kind, queue, payload, state, max_attempts)
VALUES (gen_random_uuid(), 'bench.job', 'q' || (random() * 3)::int, '{}', 'available', 3);
SQL
cat > "$work/hundred.sql" <<SQL
INSERT INTO $schema.pgqueue_jobs (public_id, kind, queue, payload, state, max_attempts)
SELECT gen_random_uuid(), 'bench.job', 'q1', '{}', 'available', 3 FROM generate_series(1, 100);
SQL

run() { # script, setting -> "tps latency_ms"
	psql -qX -c "ALTER TABLE $schema.pgqueue_jobs $2 TRIGGER pgqueue_jobs_notify_inserted" >/dev/null
	pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -f "$work/$1.sql" 2>/dev/null \
		| awk '/^latency average/ {lat=$4} /^tps/ {tps=$3} END {print tps, lat}'
}

summary() { # file of "tps latency" lines
	sort -n -k1 "$1" | awk '{t[NR]=$1; l[NR]=$2} END {
		n=NR; m=int((n+1)/2); split("", s); for (i=1;i<=n;i++) s[i]=l[i];
		asort(s); printf "tps median %.0f (%.0f–%.0f), latency median %.3f ms (%.3f–%.3f)\n", t[m], t[1], t[n], s[m], s[1], s[n] }'
}

for script in one hundred; do
	: > "$work/$script.DISABLE"; : > "$work/$script.ENABLE"
	for round in $(seq 1 "$rounds"); do
		if (( round % 2 )); then order="DISABLE ENABLE"; else order="ENABLE DISABLE"; fi
		for setting in $order; do
			run "$script" "$setting" >> "$work/$script.$setting"
		done
	done
	for setting in DISABLE ENABLE; do
		echo "$script row(s) per insert, trigger ${setting,,}d, $clients client(s), $rounds x ${seconds}s: $(summary "$work/$script.$setting")"
	done
done
