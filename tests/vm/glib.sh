# Helpers for the scripts that run inside the test guests (sourced; see
# vm.sh), over the integration tests' lib.sh (bad, finish, fail, PIDS and
# their cleanup). One script serves both shapes:
#   one guest: it is both sides, client and server meet on rxe0;
#   two guests: a runs the clients, b the servers (roles; client and two
#   tell where a script runs), and they meet on the socket link.
# VM_RUN is shared by the host and both guests: the key, the marks that
# order the two guests (mark / await), and logs the other side may read
# (named $L.NAME: L is this script's prefix there). W is this guest's own
# scratch (a tmpfs).
WAIT_LISTEN_S=20 # under TCG a daemon takes seconds to start
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

KEY=$VM_RUN/key
CHECK=$SRC/tests/vm/check.py
L=$VM_RUN/$VM_CASE
W=/run/ferry/$VM_CASE
mkdir -p "$W"
PEER=${VM_PEER_IP:-$VM_IP} # the servers' address, seen from the clients

note() { echo "== [${SECONDS}s] $*"; }

# What this script (or its server part) started goes when it ends, and a
# waiting peer learns that it ended.
gone() {
	cleanup_procs
	touch "$VM_RUN/gone.$VM_CASE.$VM_NAME"
}
trap 'gone; cleanup' EXIT

client() { [ "$VM_NAME" = a ]; }
two() { [ -n "$VM_PEER_IP" ]; }

# roles SERVER CLIENT: run this guest's part and finish. In one guest
# the function SERVER runs in the background (its checks end it: pass or
# fail) while CLIENT runs here; in two guests b runs SERVER, a CLIENT.
roles() {
	local pid
	if two; then
		if client; then "$2"; else "$1"; fi
	else
		( trap gone EXIT; "$1"; finish "(the server side)" ) &
		pid=$!
		"$2"
		wait $pid || bad "the server side failed (above)"
	fi
	finish
}

# tree DIR: what DIR holds, sorted: a line a directory and a file (type,
# mode, size, path), then each file's md5 (md5sum is quick under TCG,
# where hashing with SIMD code is emulated slowly).
tree() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 -printf '%y %m %s %P\n' | sed 's/^d \([0-7]*\) [0-9]*/d \1 -/' | sort -k4
		find . -type f -printf '%P\0' | sort -z | xargs -0 -r md5sum
	)
}
# mark NAME: tell the other guest (and the host) that NAME happened.
mark() { touch "$VM_RUN/mark.$VM_CASE.$1"; }

# await NAME [SEC]: until the other guest marks NAME (SEC, default 60, at
# most); fails when it does not, or when the other guest's script ended.
await() {
	local i other=a
	[ "$VM_NAME" = a ] && other=b
	for i in $(seq $((${2:-60} * 10))); do
		[ -e "$VM_RUN/mark.$VM_CASE.$1" ] && return 0
		two && [ -e "$VM_RUN/gone.$VM_CASE.$other" ] &&
			fail "guest $other ended before it marked '$1'"
		sleep 0.1
	done
	fail "guest $other did not mark '$1' within ${2:-60} s"
}

# recv NAME PORT [ARGS...]: a `ferry recv --transport verbs` on this
# guest's address, in the background (RPID), its output in $L.NAME.log;
# listening when this returns.
recv() {
	local name=$1 port=$2
	shift 2
	"$FERRY" recv --key "$KEY" --transport verbs -p "$port" -B "$VM_IP" \
		-i 0 "$@" >"$L.$name.log" 2>&1 &
	RPID=$!
	PIDS+=($RPID)
	wait_listen "$port"
}
