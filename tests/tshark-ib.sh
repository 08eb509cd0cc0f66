#!/usr/bin/env bash
# tshark reading RoCEv2 (UDP port 4791) as InfiniBand, the IB layer only:
# every heuristic that guesses a protocol inside a SEND's payload (RPC over
# RDMA, iSER, SMB Direct, Ethernet over IB, ...) is off, so ferry's own
# messages are never taken for one of them and called malformed. The
# names are Wireshark's internal heuristic names (tshark 4.0); a tshark
# that does not know one refuses to start, and runs again without it.
#   tests/tshark-ib.sh -r CAPTURE [tshark options...]
heur=(eth_over_ib mellanox_eoib fc_infiniband iser_infiniband lnet_ib
	nvme_rdma rpcrdma_infiniband sdp_infiniband smb_direct_infiniband
	smcr_infiniband)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do
	args=()
	for h in "${heur[@]}"; do args+=(--disable-heuristic "$h"); done
	tshark -d udp.port==4791,infiniband "${args[@]}" "$@" 2>"$err"
	rc=$?
	unknown=$(sed -n 's/.*No such protocol \([^ ,]*\), can.t disable.*/\1/p' "$err")
	if [ -z "$unknown" ]; then
		grep -v '^Running as user' "$err" >&2
		exit $rc
	fi
	for i in "${!heur[@]}"; do
		grep -qx "${heur[$i]}" <<<"$unknown" && unset 'heur[i]'
	done
done
cat "$err" >&2
exit 1
