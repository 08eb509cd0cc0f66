#!/usr/bin/env bash
# `meson install` into a temporary DESTDIR gives a user what they need:
# the binaries, libferry.so.0 exporting the public API only, the headers,
# a libferry.pc that builds docs/examples/hello_ferry.c (which then runs a
# loopback session through the installed library), the man pages with a
# page for every function, a systemd unit that systemd-analyze accepts, and
# the gfal2 plugin where gfal2 looks for it.
# The build directory is only read (meson install --no-rebuild).
. "$(dirname "$0")/lib.sh"

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
DEST=$T/dest
for tool in meson pkg-config cc nm readelf; do
	command -v $tool >/dev/null || skip "$tool is not installed (tools/deps.sh)"
done

note "meson install --destdir"
meson install -C "$BUILD" --destdir "$DEST" --no-rebuild --quiet \
	>"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "meson install failed"; }

# Where things went: the build's own directories, below DEST.
eval "$(meson introspect "$BUILD" --buildoptions | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
p = o["prefix"]
for k in ("bindir", "libdir", "includedir", "mandir", "datadir"):
    print("%s=%s" % (k.upper(), os.path.join(p, o[k])))
print("PREFIX=%s" % p)
print("SANITIZE=%s" % o.get("b_sanitize", "none"))')"
dpdk=$(meson introspect "$BUILD" --dependencies | python3 -c '
import json, sys
print(any(d["name"] == "libdpdk" for d in json.load(sys.stdin)))')

# Binaries.
"$DEST$BINDIR/ferry" version | grep '^ferry [0-9]' >/dev/null || fail "installed ferry does not run"
if [ "$dpdk" = True ]; then
	[ -x "$DEST$BINDIR/ferry-wanem" ] || fail "ferry-wanem not installed"
fi

# The library: soname, links, and only ferry_* exported.
lib=$DEST$LIBDIR/libferry.so
[ -L "$lib" ] && [ -L "$lib.0" ] || fail "libferry.so / libferry.so.0 links missing"
readelf -d "$lib.0" | grep 'SONAME.*\[libferry\.so\.0\]' >/dev/null || fail "soname is not libferry.so.0"
nm -D --defined-only "$lib.0" | awk '$2 != "A" {print $3}' | sed 's/@.*//' >"$T/syms"
[ -s "$T/syms" ] || fail "libferry.so exports nothing"
if grep '^ferry__' "$T/syms"; then fail "libferry.so exports internal ferry__ names (above)"; fi
if grep -v '^ferry_' "$T/syms"; then fail "libferry.so exports names outside ferry_ (above)"; fi
note "libferry.so.0 exports $(wc -l <"$T/syms") symbols, all ferry_*, no ferry__"

# The gfal2 plugin, where gfal2 looks (LIBDIR/gfal2-plugins), exporting
# its entry point only, with its configuration (SYSCONFDIR/gfal2.d).
if [ -f "$BUILD/apps/gfal2/libgfal_plugin_ferry.so" ]; then
	plug=$DEST$LIBDIR/gfal2-plugins/libgfal_plugin_ferry.so
	[ -f "$plug" ] || fail "the gfal2 plugin is not installed in $LIBDIR/gfal2-plugins"
	nm -D --defined-only "$plug" | awk '$2 != "A" {print $3}' >"$T/psyms"
	[ "$(cat "$T/psyms")" = gfal_plugin_init ] ||
		fail "the gfal2 plugin exports more than gfal_plugin_init: $(tr '\n' ' ' <"$T/psyms")"
	find "$DEST" -path '*gfal2.d/ferry_plugin.conf' | grep -q . ||
		fail "ferry_plugin.conf is not installed in gfal2.d"
	note "gfal2 plugin installed, exporting gfal_plugin_init only"
fi

# Headers.
for h in "$SRC"/include/ferry/*.h; do
	cmp -s "$h" "$DEST$INCLUDEDIR/ferry/$(basename "$h")" ||
		fail "include/ferry/$(basename "$h") not installed"
done

# pkg-config, against the DESTDIR copy only: the .pc under DEST is the only
# one searched, and the sysroot moves its -I and -L into DEST.
pc() {
	PKG_CONFIG_LIBDIR=$DEST$LIBDIR/pkgconfig PKG_CONFIG_PATH= \
		PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config "$@"
}
flags=$(pc --cflags --libs libferry) || fail "pkg-config cannot find libferry"
note "pkg-config --cflags --libs libferry: $flags"
case "$flags" in *"$DEST"*) ;; *) fail "pkg-config flags do not point into DESTDIR" ;; esac
[ "$(pc --modversion libferry)" = "$(meson introspect "$BUILD" --projectinfo |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')" ] ||
	fail "libferry.pc has the wrong version"

note "build docs/examples/hello_ferry.c against it"
# A sanitized libferry (make test-asan) needs its runtime in the program.
san=
[ "$SANITIZE" = none ] || san=-fsanitize=$SANITIZE
# shellcheck disable=SC2086 # flags are words
cc -std=c11 -Wall -Wextra -Werror -pedantic $san -o "$T/hello_ferry" \
	"$SRC/docs/examples/hello_ferry.c" $flags -pthread ||
	fail "hello_ferry.c does not build against the installed libferry"
LD_LIBRARY_PATH=$DEST$LIBDIR ldd "$T/hello_ferry" | grep "$DEST$LIBDIR/libferry.so.0" >/dev/null ||
	fail "hello_ferry does not load the installed libferry.so.0"
LD_LIBRARY_PATH=$DEST$LIBDIR timeout 120 "$T/hello_ferry" "$T" >"$T/hello.out" 2>&1
rc=$?
cat "$T/hello.out"
[ $rc -eq 0 ] || fail "hello_ferry exited $rc"
grep -q '^session: 67108864 bytes.*counted 67108864$' "$T/hello.out" ||
	fail "hello_ferry's session did not move 64 MiB"

# Man pages: one per command, and `man ferry_X` for every exported function.
man1=$DEST$MANDIR/man1
for p in ferry ferry-recv ferry-send ferry-bench ferry-keygen ferry-doctor \
	ferry-rocedump ferry-version; do
	[ -f "$man1/$p.1" ] || fail "man page $p.1 not installed"
done
[ "$dpdk" = True ] && { [ -f "$man1/ferry-wanem.1" ] || fail "ferry-wanem.1 not installed"; }
[ -f "$DEST$MANDIR/man3/libferry.3" ] || fail "libferry.3 not installed"
while read -r s; do
	[ -f "$DEST$MANDIR/man3/$s.3" ] || fail "no man page for $s"
done <"$T/syms"
if command -v man >/dev/null; then
	out=$(MANWIDTH=80 MANPAGER=cat man --warnings -M "$DEST$MANDIR" 3 ferry_bench 2>&1) ||
		fail "man ferry_bench: $out"
	grep -q 'ferry_bench' <<<"$out" || fail "man ferry_bench does not show ferry_bench"
fi

# The service: its files, and systemd's own check of the unit.
unit=$DEST$PREFIX/lib/systemd/system/ferry-recv.service
[ -f "$unit" ] || fail "ferry-recv.service not installed"
[ -f "$DEST$PREFIX/lib/sysusers.d/ferry.conf" ] || fail "sysusers.d/ferry.conf not installed"
[ -f "$DEST$DATADIR/doc/ferry/examples/ferry-recv.conf" ] || fail "example ferry-recv.conf not installed"
for want in "^User=ferry$" "^AmbientCapabilities=CAP_IPC_LOCK CAP_NET_RAW$" \
	"^CapabilityBoundingSet=CAP_IPC_LOCK CAP_NET_RAW$" "^LimitMEMLOCK=infinity$" \
	"^ProtectSystem=strict$" "^ProtectHome=yes$" "^PrivateTmp=yes$" \
	"^NoNewPrivileges=yes$" "^ReadWritePaths=" "^EnvironmentFile=" \
	"^ExecStart=$BINDIR/ferry recv "; do
	grep -q "$want" "$unit" || fail "ferry-recv.service lacks $want"
done
if ! command -v systemd-analyze >/dev/null; then
	note "SKIP systemd-analyze verify: systemd-analyze is not installed here"
else
	# verify wants ExecStart's binary to exist: point it into DEST. It
	# exits 0 on unknown or bad settings too, so any output is a failure.
	mkdir -p "$T/unit"
	sed "s|^ExecStart=$BINDIR/|ExecStart=$DEST$BINDIR/|" "$unit" >"$T/unit/ferry-recv.service"
	out=$(systemd-analyze verify --man=no "$T/unit/ferry-recv.service" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -qiE 'Failed to (initialize|connect|create|allocate).*(manager|bus)|Unit .*target not found' <<<"$out"; then
		note "SKIP systemd-analyze verify: it cannot run in this container: $out"
	else
		[ $rc -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify: $out"
		note "systemd-analyze verify: ferry-recv.service is fine"
	fi
fi
note "install: all checks passed"
