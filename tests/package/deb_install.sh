#!/usr/bin/env bash
# The Debian packages in a throw-away Debian root: `make deb`'s five
# packages (built here from a clean copy of the tree, lintian run on
# them) are installed with `apt-get install ./*.deb` into a root made by
# mmdebstrap from this host's release, which resolves their dependencies;
# there `ferry --version` and `man ferry` work, `systemd-analyze verify`
# accepts the unit (enabled, not started), a program built with
# `pkg-config --cflags --libs libferry` (docs/examples/hello_ferry.c) runs
# an authenticated loopback session, gfal2 finds the ferry plugin, and
# `apt-get remove` leaves nothing behind but the configuration files.
#
# The root (with what the packages need and the tools the checks use) is
# made once into a cache, $FERRY_DEB_CACHE or /var/cache/ferry-deb, a
# tarball per release and package list; the test skips, with the reason,
# where it cannot be made (no mmdebstrap, no mirror).
. "$(dirname "$0")/../integration/lib.sh"

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "${SANITIZE:-none}" = none ] ||
	skip "this build is sanitized ($SANITIZE); the packages are built without sanitizers, and make test installs them"
[ "$(id -u)" -eq 0 ] || skip "needs root (a chroot)"
for tool in mmdebstrap dpkg-buildpackage dh lintian git; do
	command -v $tool >/dev/null || skip "$tool is not installed (tools/deps.sh installs it)"
done
. /etc/os-release
SUITE=${VERSION_CODENAME:-bookworm}

note "make deb: the packages from a clean copy of the tree"
OUT=$T/deb "$SRC/tools/deb.sh" >"$T/deb.log" 2>&1 || {
	tail -n 40 "$T/deb.log"
	fail "make deb failed (above)"
}
tail -n 3 "$T/deb.log"
grep -E "^E: " "$T/deb/lintian.log" && bad "lintian reports errors"

note "a throw-away $SUITE root (cached)"
# what the packages depend on, and the checks' tools (ferry-stage is
# built and checked by lintian, not installed here: it would pull Open MPI
# into the cached root)
PKGS="ferry libferry0 libferry-dev ferry-wanem gfal2-plugin-ferry"
debs=()
for p in $PKGS; do
	debs+=("$(ls "$T/deb/${p}_"*.deb)")
done
need=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Depends; done |
	tr ',' '\n' | sed 's/([^)]*)//; s/|.*//; s/ //g' |
	grep -v -E "^($(echo $PKGS | tr ' ' '|')|)\$" | sort -u | paste -sd,)
need="$need,man-db,systemd,gcc,libc6-dev,pkgconf,python3-gfal2,gfal2-util-scripts,gfal2-plugin-file"
CACHE=${FERRY_DEB_CACHE:-/var/cache/ferry-deb}
mkdir -p "$CACHE" || skip "cannot make the cache directory $CACHE"
key=$(printf '%s %s' "$SUITE" "$need" | sha256sum | cut -c1-16)
tarball=$CACHE/$SUITE-$key.tar
if [ ! -s "$tarball" ]; then
	timeout 1200 mmdebstrap --variant=apt --format=tar --include="$need" "$SUITE" \
		"$tarball.tmp" >"$T/mmdebstrap.log" 2>&1 || {
		rm -f "$tarball.tmp"
		skip "mmdebstrap could not make a $SUITE root (no mirror?): $(tail -n 2 "$T/mmdebstrap.log" | paste -sd' ')"
	}
	mv "$tarball.tmp" "$tarball"
fi
R=$T/root
mkdir -p "$R"
tar -xf "$tarball" -C "$R" || fail "cannot unpack $tarball"
mount -t proc proc "$R/proc" || fail "mount proc"
cleanup_root() { umount -l "$R/proc" 2>/dev/null; }
trap 'cleanup_root; cleanup' EXIT
mkdir -p "$R/tmp/debs"
cp "${debs[@]}" "$R/tmp/debs/"
cp "$SRC/docs/examples/hello_ferry.c" "$R/tmp/"
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

note "apt-get install ./*.deb"
in_root sh -c 'apt-get install -y /tmp/debs/*.deb' \
	>"$T/apt.log" 2>&1 || {
	tail -n 20 "$T/apt.log"
	fail "apt-get install of the packages failed"
}
for p in $PKGS; do
	in_root dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' ||
		bad "$p is not installed"
done

note "the command, its manual, the unit"
v=$(in_root ferry --version) || bad "ferry --version failed"
[ "$v" = "ferry $(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)" ] ||
	bad "ferry --version says '$v'"
in_root sh -c 'MANPAGER=cat MANWIDTH=80 man ferry' >"$T/man.txt" 2>&1 &&
	grep -q "ferry" "$T/man.txt" || bad "man ferry: $(head -c 300 "$T/man.txt")"
in_root systemd-analyze verify /lib/systemd/system/ferry-recv.service >"$T/verify.txt" 2>&1 ||
	bad "systemd-analyze verify: $(cat "$T/verify.txt")"
in_root systemctl is-enabled ferry-recv.service >"$T/enabled.txt" 2>&1
grep -qx enabled "$T/enabled.txt" || bad "the unit is not enabled: $(cat "$T/enabled.txt")"
in_root systemctl is-active ferry-recv.service >"$T/active.txt" 2>&1
grep -qx active "$T/active.txt" && bad "the unit was started on install"
in_root getent passwd ferry >/dev/null || bad "no user ferry (sysusers)"

note "a program built with pkg-config runs a session through the installed library"
in_root sh -c 'cd /tmp && cc -o hello_ferry hello_ferry.c $(pkg-config --cflags --libs libferry) && ./hello_ferry /tmp' \
	>"$T/hello.txt" 2>&1 || bad "hello_ferry: $(tail -n 5 "$T/hello.txt")"
tail -n 2 "$T/hello.txt"

note "gfal2 finds the plugin"
in_root python3 -c 'import gfal2; n = gfal2.creat_context().get_plugin_names(); print(n); assert any("ferry" in x for x in n)' \
	>"$T/gfal.txt" 2>&1 || bad "gfal2 does not list the ferry plugin: $(tail -n 2 "$T/gfal.txt")"
# gfal-copy to a ferry:// URL where nothing listens: the plugin's own
# words, not "Protocol not supported"
echo hello >"$R/tmp/src.txt"
in_root gfal-copy -t 5 file:///tmp/src.txt ferry://127.0.0.1:1/x.txt >"$T/gfal-copy.txt" 2>&1 &&
	bad "gfal-copy to a closed port succeeded"
grep -q "nothing listens" "$T/gfal-copy.txt" ||
	bad "gfal-copy did not reach the ferry plugin: $(tail -n 2 "$T/gfal-copy.txt")"

note "apt-get remove: nothing left but the configuration"
in_root sh -c 'for p in ferry libferry0 libferry-dev ferry-wanem gfal2-plugin-ferry; do dpkg -L $p; done' |
	sort -u >"$T/files"
in_root sh -c 'for p in ferry libferry0 libferry-dev ferry-wanem gfal2-plugin-ferry; do dpkg-query -W -f="\${Conffiles}\n" $p; done' |
	awk 'NF { print $1 }' | sort -u >"$T/conffiles"
in_root apt-get remove -y ferry libferry0 libferry-dev ferry-wanem gfal2-plugin-ferry \
	>"$T/remove.log" 2>&1 || bad "apt-get remove failed: $(tail -n 5 "$T/remove.log")"
left=0
while read -r f; do
	[ -n "$f" ] && [ -f "$R$f" ] && [ ! -L "$R$f" ] || continue
	grep -qx "$f" "$T/conffiles" && continue
	bad "left behind after apt-get remove: $f"
	left=$((left + 1))
done <"$T/files"
echo "$(wc -l <"$T/files") paths installed, $left files left, kept: $(paste -sd' ' "$T/conffiles")"
finish
