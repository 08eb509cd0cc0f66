# Helpers for the gfal2 tests (sourced by gfal_*.sh, after which lib.sh's
# helpers are there too).
#
# Adds to lib.sh: $SRC and the build's plugin ($PLUGIN); gfal_setup, which
# skips unless gfal2 and its tools are here and then points gfal2 at a
# private plugin and configuration directory ($GFAL_PLUGIN_DIR,
# $GFAL_CONFIG_DIR) holding gfal2's file:// plugin and ours. FERRY_KEY
# and FERRY_KEY_NAME are unset, so the plugin's configuration names the
# key.
. "$(dirname "$0")/lib.sh"

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PLUGIN=$BUILD/apps/gfal2/libgfal_plugin_ferry.so
unset FERRY_KEY FERRY_KEY_NAME

# gfal_setup TOOL...: skip unless the plugin was built and the gfal-*
# TOOLs, a python3 with gfal2 and gfal2_util, and gfal2's file:// plugin
# are installed; then gfal2 loads those two plugins only, and the
# configuration in $GFAL_CONFIG_DIR (ferry_plugin.conf, to which a test
# adds its KEY=).
gfal_setup() {
	local t py d sysplugins=
	[ -f "$PLUGIN" ] || skip "the gfal2 plugin was not built (libgfal2-dev missing when meson ran)"
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t is not installed (Debian: gfal2-util-scripts, python3-gfal2-util)"
	done
	# The gfal-* scripts run the first python that imports gfal2 and
	# gfal2_util; a python3 from elsewhere on PATH (pyenv) does not see
	# Debian's modules, so name the one that does.
	if [ -z "${GFAL_PYTHONBIN:-}" ]; then
		for py in python3 /usr/bin/python3; do
			py=$(command -v $py) || continue
			"$py" -c 'import gfal2, gfal2_util' 2>/dev/null && { export GFAL_PYTHONBIN=$py; break; }
		done
		[ -n "${GFAL_PYTHONBIN:-}" ] || skip "no python3 here imports gfal2 and gfal2_util (python3-gfal2, python3-gfal2-util)"
	fi
	for d in /usr/lib/x86_64-linux-gnu/gfal2-plugins /usr/lib/*/gfal2-plugins /usr/lib64/gfal2-plugins /usr/lib/gfal2-plugins; do
		[ -f "$d/libgfal_plugin_file.so" ] && { sysplugins=$d; break; }
	done
	[ -n "$sysplugins" ] || skip "gfal2's file:// plugin is not installed (gfal2-plugin-file)"
	# GFAL_PLUGIN_DIR is one directory: links to gfal2's file plugin and ours.
	export GFAL_PLUGIN_DIR=$T/gfal2-plugins GFAL_CONFIG_DIR=$T/gfal2.d
	mkdir -p "$GFAL_PLUGIN_DIR" "$GFAL_CONFIG_DIR"
	ln -s "$sysplugins/libgfal_plugin_file.so" "$PLUGIN" "$GFAL_PLUGIN_DIR/"
	[ -f /etc/gfal2.d/gfal2_core.conf ] && cp /etc/gfal2.d/gfal2_core.conf "$GFAL_CONFIG_DIR/"
	cp "$SRC/apps/gfal2/ferry_plugin.conf" "$GFAL_CONFIG_DIR/"
	# A sanitized build (make test-asan): python loads the plugin, so the
	# sanitizer runtimes must come first; python's own leaks are not ours.
	local rt
	rt=$(ldd "$PLUGIN" | awk '/lib(a|ub)san/ { printf "%s ", $3 }')
	if [ -n "$rt" ]; then
		export LD_PRELOAD="$rt" ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
	fi
}
