#!/usr/bin/env bash
# `make deb`: the Debian packages from a clean copy of this tree (the
# files git tracks, and new ones it does not ignore), built with
# dpkg-buildpackage -us -uc -b, then checked by lintian. The packages land
# in OUT (default build-deb/): ferry, libferry0, libferry-dev, ferry-wanem,
# gfal2-plugin-ferry, ferry-stage, with their .changes and .buildinfo.
# Exit status: 0 when the six packages were built and lintian reported no
# error; 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-deb}
for tool in dpkg-buildpackage dh lintian git; do
	command -v $tool >/dev/null || {
		echo "ferry deb: $tool is missing: run tools/deps.sh (as root) or apt-get install dpkg-dev debhelper lintian git" >&2
		exit 1
	}
done
rm -rf "$OUT"
mkdir -p "$OUT/src"
# a clean tree: no build directories, nothing ignored
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		printf '%s\0' "$f"
	done | tar --null -T - -cf -) | tar -xf - -C "$OUT/src"
echo "== dpkg-buildpackage -us -uc -b in $OUT/src"
(cd "$OUT/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
	dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1 || {
	tail -n 30 "$OUT/build.log" >&2
	echo "ferry deb: dpkg-buildpackage failed; the whole log is $OUT/build.log" >&2
	exit 1
}
rm -rf "$OUT/src"
ls "$OUT"/*.deb
want="ferry libferry0 libferry-dev ferry-wanem gfal2-plugin-ferry ferry-stage"
for p in $want; do
	ls "$OUT/${p}_"*.deb >/dev/null 2>&1 || {
		echo "ferry deb: no $p package was built" >&2
		exit 1
	}
done
echo "== lintian"
lintian --fail-on error --info "$OUT"/*.changes | tee "$OUT/lintian.log"
echo "ferry deb: 6 packages in $OUT, lintian found no error"
