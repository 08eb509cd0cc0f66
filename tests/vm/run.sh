#!/usr/bin/env bash
# run.sh SHAPE CASE...: the guest scripts tests/vm/cases/CASE.sh (or, for
# a CASE with a '/', that script), in turn, in one boot of SHAPE: `one` (one guest: client and server on one rxe
# device, rxe's loopback path) or `two` (two guests on a qemu socket link,
# a real RoCEv2 Ethernet link: a runs the clients, b the servers). Passes
# when no script fails (in either guest); names each one that failed; a
# script that exits 77 (it cannot run there) is skipped, and so is the
# test when all its scripts are.
# Exits 77 with the reason where the guests cannot run here (vm.sh).
. "$(dirname "$0")/vm.sh"
shape=$1
shift
scripts=()
for c in "$@"; do
	case $c in
	*/*) s=$(cd "$(dirname "$c")" && pwd)/$(basename "$c") ;;
	*) s=$VM_HERE/cases/$c.sh ;;
	esac
	[ -f "$s" ] || fail "no guest script $s"
	scripts+=("$s")
done
[ ${#scripts[@]} -gt 0 ] || fail "usage: run.sh one|two CASE..."
vm_init
case $shape in
one) vm_one "${scripts[@]}" ;;
two) vm_two "${scripts[@]}" ;;
*) fail "shape $shape: one or two" ;;
esac
for f in "${VM_FAILED[@]}"; do
	bad "$f"
done
[ ${#VM_FAILED[@]} -eq 0 ] && [ ${#VM_SKIPPED[@]} -eq ${#scripts[@]} ] &&
	skip "every guest script skipped (above)"
finish
