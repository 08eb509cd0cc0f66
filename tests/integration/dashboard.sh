#!/usr/bin/env bash
# The Grafana dashboard (docs/grafana/ferry.json) asks only for metrics
# ferry serves: every ferry_* name in its queries and variables must be in
# a live /metrics scrape of a receiver (with --metrics-host, for the host
# panel) taken while a bench session runs. A renamed metric breaks this
# test instead of the dashboard.
. "$(dirname "$0")/lib.sh"

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
DASH=$SRC/docs/grafana/ferry.json
command -v curl >/dev/null || skip "curl is not installed (tools/deps.sh installs it)"
command -v python3 >/dev/null || skip "python3 not found"
[ -f "$DASH" ] || fail "no dashboard at $DASH"

note "the metric names the dashboard's queries use"
python3 - "$DASH" >"$T/names" <<'PY' || fail "the dashboard is not valid JSON with queries"
import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
exprs += [v["definition"] for v in d["templating"]["list"] if "definition" in v]
names = sorted({n for e in exprs for n in re.findall(r"\bferry_[a-z0-9_]+", e)})
assert len(exprs) >= 9 and len(names) >= 10, (len(exprs), names)
print("\n".join(names))
PY
echo "$(wc -l <"$T/names") names: $(paste -sd' ' "$T/names")"

note "a receiver with --metrics --metrics-host, scraped during a bench"
port=$(free_port)
"$FERRY" recv --no-auth -B 127.0.0.1 -p "$port" --metrics 127.0.0.1:0 --metrics-host \
	>"$T/recv.out" 2>"$T/recv.err" &
PIDS+=($!)
wait_listen "$port"
url=$(grep -o 'http://[^ ]*/metrics' "$T/recv.err" | head -1)
if [ -z "$url" ] && grep -q "built without libmicrohttpd" "$T/recv.err"; then
	skip "this build has no libmicrohttpd: $(head -n 1 "$T/recv.err")"
fi
[ -n "$url" ] || { cat "$T/recv.err"; fail "the receiver did not print its metrics URL"; }
"$FERRY" bench --no-auth -t 5 -q 127.0.0.1:"$port" >"$T/bench.out" 2>&1 &
bpid=$!
PIDS+=($bpid)
# scraped until every name is there (the session's series appear once
# its data phase runs) or the bench has ended
missing() {
	local name n=0
	while read -r name; do
		grep -Eq "^$name[{ ]" "$T/scrape" || { n=$((n + 1)); echo "$name"; }
	done <"$T/names"
	return $((n == 0))
}
for _ in $(seq 50); do
	curl -sS --max-time 5 -o "$T/scrape" "$url" || fail "curl $url"
	missing >/dev/null || break
	kill -0 $bpid 2>/dev/null || break
	sleep 0.2
done
wait $bpid || fail "the bench failed: $(tail -n 3 "$T/bench.out")"
while read -r name; do
	bad "the dashboard asks for $name, which the scrape does not have"
done < <(missing)
finish
