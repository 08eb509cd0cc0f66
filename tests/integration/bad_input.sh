#!/usr/bin/env bash
# Bad input: each case gets one clear line on stderr and a non-zero exit.
. "$(dirname "$0")/lib.sh"

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
"$FERRY" keygen "$T/other" >/dev/null || fail "keygen"
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 -q >"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen "$port"

# expect CODE PATTERN CMD...: exit status CODE (or any non-zero for "nz"),
# exactly one line on stderr, matching PATTERN.
expect() {
	local code=$1 pat=$2 rc
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$code" = nz ]; then
		[ $rc -ne 0 ] || fail "'$*' exited 0"
	else
		[ $rc -eq "$code" ] || { cat "$T/err"; fail "'$*' exited $rc, not $code"; }
	fi
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "'$*' printed $(wc -l <"$T/err") lines on stderr, not 1"; }
	grep -Eq -e "$pat" "$T/err" || { cat "$T/err"; fail "'$*': message does not match /$pat/"; }
	printf 'ok  %-60s -> %s' "${*:2}" "$(cat "$T/err")"
	echo
}

B="$FERRY bench --key $T/key"
closed=$(free_port)
note "unreachable and absent peers"
expect 1 "nothing listens on 127.0.0.1 port $closed" $B -t 1 127.0.0.1:$closed
if [ "$(id -u)" -eq 0 ] && ip netns add ferryX$$ 2>/dev/null; then
	NETNS+=(ferryX$$)
	# an empty namespace has no route anywhere: nothing leaves the host
	expect 1 "no route to 198.18.0.9|unreachable" ip netns exec ferryX$$ $B -t 1 198.18.0.9
fi
note "keys"
expect 1 "authentication failed" $FERRY bench --key $T/other -t 1 127.0.0.1:$port
expect 2 "no key" env -u FERRY_KEY $FERRY bench -t 1 127.0.0.1:$port
expect 2 "does not exist.*ferry keygen" $FERRY bench --key $T/nokey -t 1 127.0.0.1:$port
cp "$T/key" "$T/open"; chmod 644 "$T/open"
expect 2 "chmod 600" $FERRY bench --key $T/open -t 1 127.0.0.1:$port
printf 'not a key\n' >"$T/junk"; chmod 600 "$T/junk"
expect 2 "key" $FERRY bench --key $T/junk -t 1 127.0.0.1:$port
expect 1 "already exists" $FERRY keygen $T/key
note "the receiver's port is taken"
expect 1 "port $port is already in use" $FERRY recv --key $T/key -p $port -B 127.0.0.1
expect 2 "--no-auth is only allowed with a loopback" $FERRY recv --no-auth -p $closed
expect 1 "receiver.*authentication|authentication failed" $FERRY bench --no-auth -t 1 127.0.0.1:$port
note "absurd sizes"
expect 2 "chunk size must be a multiple of 4 KiB" $B -l 0 127.0.0.1:$port
expect 2 "chunk size must be a multiple of 4 KiB" $B -l 3000 127.0.0.1:$port
expect 2 "chunk size" $B -l 2G 127.0.0.1:$port
expect 2 "bad value '100000' for -P" $B -P 100000 127.0.0.1:$port
expect 2 "bad value '0' for -P" $B -P 0 127.0.0.1:$port
expect 2 "bad value '-1' for -t" $B -t -1 127.0.0.1:$port
expect 2 "bad value 'abc' for -t" $B -t abc 127.0.0.1:$port
expect 2 "-n must be more than 0" $B -n 0 127.0.0.1:$port
expect 2 "bad value '1Q' for -n" $B -n 1Q 127.0.0.1:$port
expect 2 "over the .* MiB limit|slots" $B --slots 65536 127.0.0.1:$port
expect 2 "bad value '0' for --slots" $B --slots 0 127.0.0.1:$port
expect 2 "bad address" $B -t 1 127.0.0.1:99999
expect 2 "give exactly one HOST" $B -t 1
expect 2 "transport 'carrier-pigeon' is not in this build; usable here: tcp" $B --transport carrier-pigeon 127.0.0.1:$port
expect 2 "unknown command" $FERRY frobnicate

note "the command line: one line for a mistyped option, none from getopt"
expect 2 "^ferry bench: unknown option '--frobnicate' \(see .ferry bench --help.\)$" $B --frobnicate 127.0.0.1:$port
expect 2 "^ferry recv: unknown option '-z' \(see .ferry recv --help.\)$" $FERRY recv -z
expect 2 "^ferry send: option '--key' needs a value" $FERRY send --key
expect 2 "^ferry bench: option '--ke' is ambiguous \(--key, --key-name\)" $FERRY bench --ke $T/key 127.0.0.1:$port
expect 2 "^ferry bench: option '--json' takes no value" $B --json=yes 127.0.0.1:$port
[ "$($FERRY serve --help | head -n 1)" = "usage: ferry serve [options]" ] ||
	fail "ferry serve --help begins '$($FERRY serve --help | head -n 1)'"
[ "$($FERRY recv --help | head -n 1)" = "usage: ferry recv [options]" ] ||
	fail "ferry recv --help begins '$($FERRY recv --help | head -n 1)'"
echo "ok  serve --help says ferry serve, recv --help ferry recv"

note "ports, schemes and destinations"
expect 2 "ferry://127.0.0.1:70000/x: port 70000 is out of range \(1 to 65535\)" $FERRY cp --key $T/key $T/key ferry://127.0.0.1:70000/x
expect 2 "http://x/: the http:// scheme is not supported" $FERRY cp --key $T/key $T/key http://x/
expect 2 "bad destination '127.0.0.1:$port:../x': write HOST\[:PORT\]:/DEST, DEST starting with '/'" $FERRY send --key $T/key $T/key 127.0.0.1:$port:../x
expect 2 "bad destination '127.0.0.1:$port:/a/../../x': DEST cannot hold '..'" $FERRY send --key $T/key $T/key 127.0.0.1:$port:/a/../../x

note "what this host has"
cpu=$(( $(nproc --all) + 1000 ))
expect 2 "names CPU $cpu, which this process cannot run on \(it may use CPUs [0-9]" $B --cpus 0,$cpu -t 1 127.0.0.1:$port
expect 2 "names CPU $cpu, which this process cannot run on" $FERRY recv --key $T/key --cpus $cpu -B 127.0.0.1 -p $closed
expect 2 "bad value '0' for --max-mem: a session's ring needs at least 8K" $FERRY recv --key $T/key --max-mem 0 -B 127.0.0.1 -p $closed
grep -q -e "--slots" -e " -l" "$T/err" && fail "recv --max-mem 0 advises options recv does not have: $(cat "$T/err")"

note "the receiver refuses a ring over its limit, with its reason"
port2=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port2" -B 127.0.0.1 --max-mem 64M -q >"$T/recv2.out" 2>&1 &
PIDS+=($!)
wait_listen "$port2"
expect 1 "receiver: .*over this receiver's limit of 64 MiB" $B -t 1 127.0.0.1:$port2

note "the receiver is still serving"
$B -n 64M -q 127.0.0.1:$port >/dev/null || fail "receiver stopped serving"
echo "PASS"
