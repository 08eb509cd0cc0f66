#!/usr/bin/env bash
# README.md and docs/*.md speak to users: they state facts (what ferry
# does, what was measured, when, on what host, with which command), not
# the history of the work. Fails (exit 1) with one line per problem,
# FILE:LINE: WHAT: TEXT, on
#   - an issue reference: "issue 9", "issues 6, 7", "issue #9";
#   - a commit reference: "commit" (commits, committed) followed by a hex
#     word of 7-40 digits, at once or within four words; "HEAD 31c81a8";
#     "tree at df2f2d3", "worktree of 24b630b"; "sha256 5e9cea42..." (of
#     a build); a hex word of 7-12 digits that opens a parenthesis,
#     "(5de9eae)", "(f599f53, da0604f)", or follows "at" or "on";
#   - a path outside the repository: an absolute path whose first
#     component is not a system location ferry installs to or uses (below),
#     or any "../shared/" reference.
# A reference split over two lines ("at commit" / "1df1b45") counts, on
# the line where it starts.
# Checksum values in examples (adler32:1a2b3c4d, -K ADLER32:..., 0x...)
# and decimal numbers are not commit references: a hex word must stand on
# its own (not glued to a ':' or an 'x'), and one that does not follow
# "commit" directly must hold both a digit and a letter a-f.
# Paths are only looked at where a token starts with '/' and a letter
# after the start of the line, a space, a backtick, a quote, '(', '[' or
# '=', so "Gb/s", "1/2", "s/GB" and the paths inside URLs (anything after
# "://") are never taken for paths.
#
# Before it reads the docs it runs its matcher on built-in samples and
# fails if a bad one passes or a good one is flagged, so it cannot pass
# because a pattern matches nothing.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
files=(README.md docs/*.md)
set -f # the words of a line are split below, never globbed

# First path components an absolute path in the docs may start with:
# where ferry installs, what it reads, where examples put data (an HPC
# site's scratch and Lustre mounts too).
SYSTEM='usr|etc|var|run|dev|proc|sys|lib|opt|tmp|srv|data|home|mnt|bin|sbin|boot|scratch|lustre'
# Paths inside a daemon's export (below its export root, as
# docs/exports.md explains) and HTTP paths, as the examples spell them.
EXPORTED='atlas|atla|atlasX|cms|incoming|shared/in|a|f1|no/such/file|metrics'

# The patterns. A word edge: not a letter, digit or '_'.
W='[^[:alnum:]_]'
ISSUE_RE="(^|$W)(issues?[[:space:]]*#?[0-9]+)"
COMMIT_RE="(^|$W)commit(s|ted)?($W|\$)"
COMMIT_NEXT_RE="^commit(s|ted)?[[:space:]]+([0-9a-f]{7,40})($W|\$)"
HEAD_RE="(^|$W)(HEAD[[:space:]:]+([0-9a-f]{7,40}))($W|\$)"
TREE_RE="(^|$W)((work)?tree[[:space:]]+(at|of)[[:space:]]+([0-9a-f]{7,40}))($W|\$)"
SHA_RE="(^|[^[:alnum:]_-])(sha-?256[[:space:]:]+([0-9a-f]{8,}))($W|\$)"
BARE_RE="(\\(|(^|$W)(at|on)[[:space:]]+)([0-9a-f]{7,12})([],;:)[:space:]]|\$)"
SHARED_RE='\.\./shared/'
PATH_RE='(^|[[:space:]`"'"'"'(=[])(/[A-Za-z][^][:space:]`"'"'"'),]*)'
SYSTEM_RE="^/($SYSTEM)([^[:alnum:]_.-]|\$)"
EXPORTED_RE="^/($EXPORTED)([^[:alnum:]_.-]|\$)"

# hex_word WORD: it holds a digit and a letter a-f (so it is neither a
# decimal number nor an English word such as "defaced").
hex_word() { [[ $1 =~ [0-9] && $1 =~ [a-f] ]]; }

# add WHAT KEY: one problem, once per KEY (a hash found by two patterns
# is one problem).
add() {
	local k
	for k in "${KEYS[@]}"; do
		[ "$k" = "$2" ] && return
	done
	KEYS+=("$2")
	PROBS+=("$1")
}

# check LINE: sets PROBS to one "WHAT: TEXT" per problem in LINE, and
# KEYS to the matched words.
check() {
	local line=$1 rest m w tok n
	PROBS=()
	KEYS=()

	shopt -s nocasematch
	if [[ $line =~ $ISSUE_RE ]]; then
		add "issue reference: ${BASH_REMATCH[2]}" "${BASH_REMATCH[2]}"
	fi

	# "commit 5347f81", "committed next as 22dc2f0"
	rest=$line
	while [[ $rest =~ $COMMIT_RE ]]; do
		m=${BASH_REMATCH[0]}
		rest=${rest#*"$m"}
		m=${m#"${BASH_REMATCH[1]}"}
		if [[ $m$rest =~ $COMMIT_NEXT_RE ]]; then
			w=${BASH_REMATCH[2]}
			add "commit reference: commit $w" "$w"
			continue
		fi
		n=0
		for w in ${rest%%[.;]*}; do
			n=$((n + 1))
			[ $n -gt 4 ] && break
			w=${w#[\(\`\"\']}
			w=${w%%[\),\`\"\':]*}
			if [[ $w =~ ^[0-9a-f]{7,40}$ ]] && hex_word "$w"; then
				add "commit reference: commit ... $w" "$w"
				break
			fi
		done
	done
	shopt -u nocasematch

	if [[ $line =~ $HEAD_RE ]]; then
		m=${BASH_REMATCH[2]} w=${BASH_REMATCH[3]}
		hex_word "$w" && add "commit reference: $m" "$w"
	fi
	shopt -s nocasematch
	if [[ $line =~ $TREE_RE ]]; then
		m=${BASH_REMATCH[2]} w=${BASH_REMATCH[5]}
		hex_word "$w" && add "commit reference: $m" "$w"
	fi
	if [[ $line =~ $SHA_RE ]]; then
		add "build hash: ${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
	fi
	shopt -u nocasematch

	# "(5de9eae)", "(f599f53, da0604f)", "(da0604f: ...", "at 8fee7f2"
	rest=$line
	while [[ $rest =~ $BARE_RE ]]; do
		m=${BASH_REMATCH[0]} w=${BASH_REMATCH[4]}
		tok=${BASH_REMATCH[1]#"${BASH_REMATCH[2]}"}
		rest=${rest#*"$m"}
		hex_word "$w" && add "commit reference: $tok$w" "$w"
	done

	if [[ $line =~ $SHARED_RE ]]; then
		add "path outside the repository: ../shared/" "../shared/"
	fi
	rest=$line
	while [[ $rest =~ $PATH_RE ]]; do
		m=${BASH_REMATCH[0]} tok=${BASH_REMATCH[2]}
		rest=${rest#*"$m"}
		[[ $tok =~ $SYSTEM_RE || $tok =~ $EXPORTED_RE ]] && continue
		add "path outside the repository: $tok" "$tok"
	done
}

# scan NAME: reads the lines of NAME from stdin and prints NAME:N: WHAT
# for every problem; sets FOUND to their number.
scan() {
	local name=$1 line i j k p joined
	local -a lines=() probs=() keys=()
	FOUND=0
	while IFS= read -r line || [ -n "$line" ]; do
		lines+=("$line")
	done
	for ((i = 0; i < ${#lines[@]}; i++)); do
		check "${lines[i]}"
		probs[i]=
		[ ${#PROBS[@]} -eq 0 ] || printf -v 'probs[i]' '%s\n' "${PROBS[@]}"
		keys[i]=" ${KEYS[*]} "
	done
	for ((i = 0; i < ${#lines[@]}; i++)); do
		if [ -n "${probs[i]}" ]; then
			while IFS= read -r p; do
				echo "$name:$((i + 1)): $p"
				FOUND=$((FOUND + 1))
			done <<<"${probs[i]%$'\n'}"
		fi
		# a reference split over this line and the next: the last six
		# words of this one and the first four of the next
		j=$((i + 1))
		[ $j -lt ${#lines[@]} ] || continue
		# shellcheck disable=SC2206
		local -a a=(${lines[i]}) b=(${lines[j]})
		if [ ${#a[@]} -eq 0 ] || [ ${#b[@]} -eq 0 ]; then
			continue
		fi
		k=$((${#a[@]} > 6 ? ${#a[@]} - 6 : 0))
		joined="${a[*]:k} ${b[*]:0:4}"
		check "$joined"
		for ((k = 0; k < ${#PROBS[@]}; k++)); do
			case "${keys[i]}${keys[j]}" in
			*" ${KEYS[k]} "*) continue ;;
			esac
			echo "$name:$((i + 1)): ${PROBS[k]} (over two lines)"
			FOUND=$((FOUND + 1))
		done
	done
}

# --- the matcher on samples first -----------------------------------------
bad_samples=(
	"see issue 9"
	"Issues 6, 7, 9 asked for it"
	"(issue #12)"
	"commit 5347f81"
	"at commit 1df1b45, 2026-12-01"
	"a clean export of commit 5347f81 (git archive)"
	"polling (committed next as 22dc2f0; the same)"
	"a receiver stopped its workers at FIN (5de9eae)."
	"run before and after them (f599f53, da0604f):"
	"on the redesigned tree (da0604f: the library split)"
	"apps/ferry/ are unchanged at 8fee7f2)"
	"the binary before (HEAD 31c81a8, sha256"
	"tree at df2f2d3"
	"worktree of 24b630b, the commit before the change"
	"(binary sha256 5e9cea42e061...)"
	"/work/main/x"
	"see \`/work/main/build/apps/ferry/ferry\`"
	"BUILD=/work/main/build bench/gfal_copy.sh"
	"../shared/DESIGN.md"
	"It follows ../shared/DESIGN.md (the intended design)"
)
good_samples=(
	"adler32:1e7f1ac2  run42/raw/f1.root"
	"-K ADLER32:1a2b3c4d"
	"gfal-copy -K ADLER32:1a2b3c4d -f ferry://dtn1.example.org/atlas/run1.root"
	"crc32c:0a1b2c3d"
	"no ACK from peer QP 0xfb0400 for PSN 0xba3c03"
	"adler32 of ... is bb1397d5, expected 00000001"
	"10 Gb/s, 4.2 files/s, 1/2 of the cap, 0.5 s/GB, 3335 MiB/s"
	"1514 / 1448 (frames)"
	"/usr/bin/ferry"
	"\`/usr/bin/time\` and /proc/self/fd/N, /tmp/x, /etc/ferry/key"
	"root://host//path and root://IPB:1094//DST/xrd/DIR/"
	"ferry://HOST[:PORT]/PATH and http://127.0.0.1:9471/metrics"
	"file:///data/run1.root"
	"paths /atlas /shared/in"
	"20,000 files in 1234567 us (1048576 bytes) at 1000000 files"
	"a tree of 1000000 files; (1234567)"
	"Mutual HMAC-SHA256 (lib/ctrl/auth.c)"
	"the first 128 bits of SHA-256 of the target's path"
	"the journal is committed to disk, then 1048576 bytes"
	"a tissue 9 paper; commit the facts"
	"/.ferry is the staging area; ./build/apps/ferry/ferry"
)
selfcheck=0
for s in "${bad_samples[@]}"; do
	check "$s"
	if [ ${#PROBS[@]} -eq 0 ]; then
		echo "docs_clean: self-check: a bad sample passes: $s"
		selfcheck=1
	fi
done
for s in "${good_samples[@]}"; do
	check "$s"
	if [ ${#PROBS[@]} -ne 0 ]; then
		echo "docs_clean: self-check: a good sample is flagged: $s (${PROBS[*]})"
		selfcheck=1
	fi
done
# a reference split over two lines
out=$(printf 'measured with ferry at commit\n1df1b45 on a VM\n' | scan sample)
if [ -z "$out" ]; then
	echo "docs_clean: self-check: a commit split over two lines passes"
	selfcheck=1
fi
out=$(printf 'adler32 of a file is\nbb1397d5, expected 00000001\n' | scan sample)
if [ -n "$out" ]; then
	echo "docs_clean: self-check: a checksum over two lines is flagged: $out"
	selfcheck=1
fi
if [ $selfcheck -ne 0 ]; then
	echo "docs_clean: the matcher is broken"
	exit 1
fi

# --- the docs ---------------------------------------------------------------
problems=0
ndocs=0
for f in "${files[@]}"; do
	if [ ! -f "$f" ]; then
		echo "docs_clean: $f is missing"
		problems=$((problems + 1))
		continue
	fi
	[ "$f" != README.md ] && ndocs=$((ndocs + 1))
	# shellcheck disable=SC2094 # $f is only the name scan prints
	scan "$f" <"$f"
	problems=$((problems + FOUND))
done

if [ $problems -ne 0 ]; then
	echo "docs_clean: $problems problems"
	exit 1
fi
echo "docs_clean: README.md and $ndocs docs files clean"
exit 0
