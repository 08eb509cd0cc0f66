/* Each command's words in --help, around the options the table gives
 * it (opts_table.c): usage, what it does, its sections, then notes, exit
 * status and examples. tools/mkman.py makes the man pages from the
 * printed text. */
#include "opts_table.h"

const struct cli_cmd cli_cmd_bench = {
	.like = "iperf3 -c",
	.name = "bench",
	.id = CLI_BENCH,
	.usage = "[options] HOST[:PORT]",
	.min_operands = 1,
	.max_operands = 1,
	.operands_hint = "give exactly one HOST[:PORT]",
	.about =
	"Memory-to-memory transfer to a `ferry recv` on HOST (port 7471 unless\n"
	"given), like iperf3 or ib_write_bw: the sender fills chunks, the receiver\n"
	"checks each chunk's crc32c and discards it. Nothing touches a disk.\n"
	"Prints an interval line every -i seconds and a summary with goodput\n"
	"(Gb/s of payload), CPU time of both sides (CPU-seconds per GB), and what\n"
	"memory and placement each side got.\n",
	.sections = {
		{ G_WHAT, "What to send (default -t 10)" },
		{ G_PIPELINE },
		{ G_OSU, "OSU-style message benchmarks (instead of -t and -n)",
		  .note =
			"  Per size: latency avg, p50, p99 and max in us, MB/s, Gb/s, messages/s,\n"
			"  and the CPU % of each side's process (the receiver reports its own).\n"
			"  --poll busy|event sets how both sides wait (default busy, as MPI\n"
			"  libraries poll), and is reported.\n" },
		{ G_SECURITY },
		{ G_OUTPUT },
	},
	.epilogue =
	"Exit status: 0 when every chunk arrived intact, 1 when the session\n"
	"failed (the reason is printed), 2 on bad usage.\n"
	"\n"
	"Example: ferry bench -P 8 -t 30 --key /etc/ferry/key dtn2.example.org\n"
	"         ferry bench --osu lat --sizes 1-64K --transport tcp dtn2\n",
};

const struct cli_cmd cli_cmd_send = {
	.like = "xrdcp -r",
	.name = "send",
	.id = CLI_SEND,
	.usage = "[options] PATH... HOST[:PORT][:/DEST]",
	.min_operands = 2,
	.max_operands = -1,
	.operands_hint = "give one or more PATHs and HOST[:PORT][:/DEST]",
	.about =
	"Send files and directories to a `ferry recv --dir DIR` on HOST (port 7471\n"
	"unless given). They land below DIR/DEST (DEST defaults to DIR itself) with\n"
	"their relative layout: a file argument by its name, a directory argument\n"
	"as that directory and everything below it. Symlinks are skipped (with a\n"
	"warning) unless -L; devices, FIFOs and sockets are refused.\n"
	"\n"
	"Every chunk is crc32c-checked on arrival. Each file is written into the\n"
	"receiver's staging area (DIR/.ferry) and published (renamed to its name,\n"
	"synced as the receiver's --fsync says) only when its whole-file\n"
	"checksums, computed on both sides, match: nothing partial ever appears\n"
	"under a final name. Another transfer writing the same path at the same\n"
	"time makes that file fail (it says so); the other files go on.\n"
	"\n"
	"Each file's checksum is printed on stdout in the line that\n"
	"`xrdcp -C adler32:print` writes (on its stderr), field for field:\n"
	"  adler32: 1a2b3c4d ferry://HOST:PORT/DEST/PATH SIZE\n"
	"(the value in hex without leading zeros, the size in bytes). On a\n"
	"terminal it reads \"adler32:1a2b3c4d  PATH (6.68 MiB)\" instead, with\n"
	"\"skipped: identical\" or \"resumed\" where that happened; --json has\n"
	"both.\n"
	"\n"
	"Resume is on by default: after an interruption (a peer killed, the\n"
	"network cut) run the same command again; the receiver keeps a journal of\n"
	"verified chunks beside each staged file, only the missing chunks are\n"
	"sent, and the whole file is still verified. A journal is discarded when the\n"
	"source's size or mtime changed. Files the earlier attempt already\n"
	"published (same size and mtime) are skipped once both sides' checksums\n"
	"agree.\n"
	"\n"
	"Progress comes every -i seconds; on a terminal it is one line redrawn in\n"
	"place.\n",
	.sections = {
		{ G_FILES },
		{ G_PIPELINE },
		{ G_SECURITY },
		{ G_OUTPUT },
	},
	.epilogue =
	"Exit status: 0 when every file was published (or skipped as identical),\n"
	"1 when any file or the session failed (each failure is printed), 2 on bad\n"
	"usage.\n"
	"\n"
	"Example: ferry send --key /etc/ferry/key -P 8 run42/ dtn2:/store/run42\n",
};

const struct cli_cmd cli_cmd_recv = {
	.like = "iperf3 -s; xrootd",
	.name = "recv",
	.id = CLI_RECV,
	.usage = "[options]",
	.min_operands = 0,
	.max_operands = 0,
	.operands_hint = "unexpected argument",
	.about =
	"Listen for ferry sessions (control port 7471 by default) and serve them\n"
	"until stopped with SIGINT or SIGTERM, or one with --once. Stopped, it\n"
	"ends the sessions still moving data (each sender is told; the chunks\n"
	"already verified stay for a rerun) and waits up to 10 s for them.\n"
	"Each session authenticates the sender with the shared key, agrees on\n"
	"transport, streams, chunk size and ring slots, then checks the crc32c\n"
	"of every chunk that lands. Bench sessions discard the payload; file\n"
	"sessions (`ferry send`) write below --dir and publish each file only\n"
	"when its whole-file checksum matches the sender's.\n"
	"The data streams of a tcp session use an extra port the kernel picks, on\n"
	"the address the control connection came in on.\n"
	"\n"
	"With --exports FILE it is the data-transfer-node daemon (`ferry serve` is\n"
	"the same command): the file names an export root and, per client key,\n"
	"its rights (read, write, delete) and path prefixes (docs/exports.md).\n"
	"Besides push sessions below the root it then serves `ferry cp` and the\n"
	"gfal2 plugin: stat, list, checksum, mkdir, rm, pull (it sends files to\n"
	"the client), third-party copy (it sends files straight to another\n"
	"daemon, with a one-time token that daemon issued) and those tokens.\n"
	"\n"
	"The sender proposes streams, chunk size and ring slots (`ferry send` and\n"
	"`ferry bench` take -P, -l and --slots); --max-mem bounds the ring one\n"
	"session may ask for.\n",
	.sections = {
		{ G_FILES },
		{ G_LISTEN },
		{ G_PIPELINE },
		{ G_SECURITY },
		{ G_OUTPUT },
	},
	.epilogue =
	"Staging: a file is written in DIR/.ferry (mode 0700, made when needed and\n"
	"removed when empty) under a name derived from its path, and renamed to\n"
	"its final name once verified; on a file system mounted below DIR, in\n"
	"that file system's own .ferry. One session writes a path at a time:\n"
	"another session sending the same path is told so and that file fails.\n"
	"\n"
	"Exit status: 0 after a signal (or, with --once, a good session), 1 when\n"
	"it cannot listen or the --once session failed, 2 on bad usage.\n"
	"\n"
	"Examples: ferry recv --key /etc/ferry/key -p 7471\n"
	"          ferry serve --exports /etc/ferry/exports.conf\n",
};

const struct cli_cmd cli_cmd_cp = {
	.like = "xrdcp -r; xrdcp --tpc",
	.name = "cp",
	.id = CLI_CP,
	.usage = "[options] SRC... DST",
	.min_operands = 2,
	.max_operands = -1,
	.operands_hint = "give one or more SRCs and a DST",
	.about =
	"Copy files to, from or between ferry daemons (`ferry serve --exports`).\n"
	"Each SRC and DST is a local path or ferry://HOST[:PORT]/PATH, PATH taken\n"
	"below the daemon's export root:\n"
	"  local -> ferry://  push: this host sends (as `ferry send`)\n"
	"  ferry:// -> local  pull: the daemon sends to a one-shot receiver this\n"
	"                     command opens on the address it reaches the daemon\n"
	"                     from (so the daemon must be able to connect back)\n"
	"  ferry:// -> ferry://  third-party copy: the destination daemon issues a\n"
	"                     one-time token bound to the target paths, sizes and\n"
	"                     an expiry; the source daemon presents it and sends\n"
	"                     straight to the destination. The data never passes\n"
	"                     through this host; progress comes back as markers.\n"
	"With several SRCs, or a DST that ends in '/' or is an existing directory,\n"
	"each SRC lands in DST under its own name; otherwise DST is the new name.\n"
	"A directory is copied with everything below it (on a daemon: its files;\n"
	"directories without files are not made). Every file is verified end to\n"
	"end (crc32c per chunk, the whole-file checksum on both sides) and\n"
	"published under its name only when it matches. Many files go in\n"
	"batches of up to 256, each its own session (and token).\n"
	"\n"
	"Each file's checksum is printed as `ferry send` prints it: on stdout\n"
	"in the line `xrdcp -C adler32:print` writes (\"adler32: 1a2b3c4d\n"
	"TARGET SIZE\", TARGET a ferry:// URL or, for a pull, the local\n"
	"absolute path); on a terminal, a line for people instead.\n",
	.sections = {
		{ G_FILES },
		{ G_PIPELINE },
		{ G_SECURITY },
		{ G_OUTPUT },
	},
	.epilogue =
	"A push (local -> ferry://) prints progress every -i seconds; a pull or\n"
	"third-party copy prints the source daemon's markers (--marker). The\n"
	"pipeline options that place work (--dpdk, --uroce-ip, --poll, --cpus,\n"
	"--numa) apply to the sending or receiving this host does: push and pull.\n"
	"\n"
	"Interrupted (SIGINT, SIGTERM), it stops the copy, on the source daemon\n"
	"too; what arrived verified is kept beside the target, and the same\n"
	"command resumes from there.\n"
	"\n"
	"Exit status: 0 when every file arrived verified, 1 when any failed (each\n"
	"is printed, with the daemon's reason) or the copy was interrupted, 2 on\n"
	"bad usage.\n"
	"\n"
	"Examples:\n"
	"  ferry cp run42.root ferry://dtn1/atlas/in/\n"
	"  ferry cp ferry://dtn1/atlas/in/run42.root .\n"
	"  ferry cp ferry://dtn1/atlas/in/run42.root ferry://dtn2:7471/atlas/\n",
};

const struct cli_cmd cli_cmd_doctor = {
	.name = "doctor",
	.id = CLI_DOCTOR,
	.usage = "[--json] [--rtt MS] [--rate GBPS] [--netdev IF]\n"
		 "[--root DIR]",
	.min_operands = 0,
	.max_operands = 0,
	.operands_hint = "takes no arguments",
	.about =
	"Check this host for bulk transfer and say how to fix what is not ready.\n"
	"Reads /sys and /proc only: changes nothing and needs no root.\n"
	"\n"
	"What it checks:\n"
	"  rdma        RDMA devices; per port: state, link layer, GIDs (RoCE v2\n"
	"              for Ethernet), RoCE MTU (follows the netdev MTU: 4096\n"
	"              needs an MTU of 4200 or more)\n"
	"  IF ...      each NIC: link, MTU (jumbo frames), NUMA node and its\n"
	"              cores, PCIe speed x width against the port speed, PCIe\n"
	"              link below the card's maximum, IRQ affinity against the\n"
	"              NIC's node\n"
	"  memory      hugepages (ferry's ring + buffers take 2 x 256 MiB by\n"
	"              default), transparent huge pages, RLIMIT_MEMLOCK\n"
	"  tcp         net.core.rmem_max/wmem_max, net.ipv4.tcp_rmem/tcp_wmem\n"
	"              against the bandwidth-delay product (per socket at most\n"
	"              1 GiB, TCP's largest window), congestion control (bbr),\n"
	"              tcp_slow_start_after_idle (0), tcp_mtu_probing (1); the\n"
	"              seconds a session takes to reach --rate at --rtt (setup\n"
	"              and slow start), and the routes' first window\n"
	"              (initcwnd, initrwnd) that would shorten them\n"
	"  cpu         the frequency governor (performance)\n",
	.sections = {
		{ G_CHECKS },
		{ G_OUTPUT },
	},
	.epilogue =
	"Each line gives PASS, WARN, FAIL or INFO, the check and what was seen;\n"
	"the fix follows on the next line. WARN costs speed. INFO is a fact with\n"
	"nothing to fix, or one this host does not tell (virtual machines).\n"
	"FAIL means ferry cannot work at all on what was asked for:\n"
	"  - --netdev names no netdev or RDMA device;\n"
	"  - the --netdev interface is down, or its RDMA device has no ACTIVE\n"
	"    port, or none of its ports has a GID (RoCE: the netdev has no IP\n"
	"    address; InfiniBand: no subnet manager);\n"
	"  - RLIMIT_MEMLOCK is below 64 MiB without CAP_IPC_LOCK while an RDMA\n"
	"    device is checked: verbs cannot register a ring (tcp would work).\n"
	"Without --netdev a port down or without GIDs is a WARN (another NIC may\n"
	"do), and so is no RDMA device at all: ferry then uses uroce or tcp.\n"
	"\n"
	"Exit status: 0 when nothing failed, 1 when a check failed, 2 on bad\n"
	"usage (including a --root without sys/ or proc/).\n"
	"\n"
	"Example: ferry doctor --rtt 120 --rate 100 --netdev ens1f0np0\n",
};

const struct cli_cmd cli_cmd_rocedump = {
	.name = "rocedump",
	.id = CLI_ROCEDUMP,
	.usage = "[--port N] [--quiet] FILE",
	.min_operands = 1,
	.max_operands = 1,
	.operands_hint = "give one capture FILE",
	.about =
	"Decode what a RoCE fabric carries, from FILE, a pcap or pcapng capture of\n"
	"Ethernet frames (tcpdump -w, tshark -w; '-' reads standard input), and\n"
	"check the invariant CRC (ICRC) of every RoCEv2 frame.\n"
	"\n"
	"A frame is RoCEv2 when it holds IPv4 or IPv6 (VLAN tags allowed), not a\n"
	"fragment, and UDP to the RoCEv2 port; other frames are counted, not\n"
	"printed. A RoCEv2 frame is either decoded or undecodable:\n"
	"  - decoded: its BTH and every extended header its opcode carries, for\n"
	"    every base transport opcode of RC, UC, RD, UD and XRC (SEND, RDMA\n"
	"    WRITE, RDMA READ request and response, atomics, ACK and NAK, SEND\n"
	"    with invalidate, FLUSH, ATOMIC WRITE) and CNP; a UD SEND to QP 1 as a\n"
	"    management datagram (MAD), the CM's named (REQ, MRA, REJ, REP, RTU,\n"
	"    DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR). Then its ICRC: ok, BAD, or\n"
	"    unchecked when the capture holds only part of the frame (its\n"
	"    snapshot length);\n"
	"  - undecodable: a reserved or vendor opcode, lengths that disagree, a\n"
	"    header the capture cut off: the reason is printed, and its ICRC is\n"
	"    counted neither good nor bad.\n"
	"\n"
	"One line per RoCEv2 frame:\n"
	"\n"
	"  N TIME SRC -> DST TRANSPORT OP qp QPN psn PSN [FLAGS] [HEADERS]\n"
	"      payload BYTES icrc ok|ICRC BAD|icrc unchecked\n"
	"  N TIME SRC -> DST undecodable: REASON [(opcode 0xOP qp QPN psn PSN)]\n"
	"\n"
	"N is the frame's number in the capture, TIME seconds since its first\n"
	"frame, TRANSPORT RC, UC, RD, UD, XRC or CNP, OP the operation\n"
	"(SEND_FIRST, RDMA_WRITE_ONLY_IMM, RDMA_READ_REQUEST, ACKNOWLEDGE, ...).\n"
	"FLAGS: se, migreq, ackreq, fecn, becn, ce (IP ECN congestion\n"
	"experienced), pkey P (when not 0xffff), vlan ID. HEADERS, each when the\n"
	"opcode carries it:\n"
	"\n"
	"  rdeth eec N\n"
	"  deth qkey Q srcqp QPN\n"
	"  xrceth srq N\n"
	"  feth sel N plt N\n"
	"  reth va VA rkey K len N\n"
	"  atomic va VA rkey K swap|add N [cmp N]\n"
	"  aeth 0xSS ACK credits N|none msn N\n"
	"  aeth 0xSS RNR_NAK timer MS ms msn N\n"
	"  aeth 0xSS NAK code N (WHAT) msn N\n"
	"  atomicack orig N\n"
	"  imm N\n"
	"  ieth rkey K\n"
	"  cm NAME [lcid N] [rcid N] [qpn QPN] [psn PSN] [reason N]\n"
	"  cm attr 0xNNNN\n"
	"  mad class 0xNN method 0xNN attr 0xNNNN\n"
	"\n"
	"Then one line per flow, the decoded frames sent from SRC to one\n"
	"destination QP (for datagrams, from one source QP), in the order their\n"
	"first frames came:\n"
	"\n"
	"  flow DST qp QPN from SRC [qp QPN]: N frames, N payload bytes,\n"
	"      N psn gaps, N retransmitted, N naks, N rnr naks, N cnps\n"
	"\n"
	"PSN gaps and retransmissions are counted over requests: a gap is a PSN\n"
	"past the next one due, a retransmission a PSN before it. An RDMA READ\n"
	"request takes as many PSNs as its responses, which depends on the path\n"
	"MTU: any from len/4096 to len/256 are in order. NAKs, RNR NAKs and CNPs\n"
	"are counted in the flow they reach, the requester's.\n"
	"\n"
	"The last line has every count, always, in this order (one line):\n"
	"\n"
	"  N frames, N RoCEv2, N decoded, N undecodable, N ICRC ok,\n"
	"  N ICRC bad, N ICRC unchecked\n"
	"\n"
	"where RoCEv2 = decoded + undecodable and decoded = ICRC ok + ICRC bad +\n"
	"ICRC unchecked.\n",
	.sections = {
		{ G_CAPTURE },
		{ G_OUTPUT },
	},
	.epilogue =
	"Exit status: 0 when no ICRC is bad and no RoCEv2 frame is undecodable,\n"
	"1 when one is, 2 on a usage error or an unreadable file.\n",
};

const struct cli_cmd cli_cmd_keygen = {
	.name = "keygen",
	.id = CLI_KEYGEN,
	.usage = "FILE",
	.min_operands = 1,
	.max_operands = 1,
	.operands_hint = "give one FILE",
	.about =
	"Write a new random 256-bit key to FILE (64 hex digits, mode 0600). Copy\n"
	"the same file to the sending and the receiving host and give it to both\n"
	"with --key FILE (or $FERRY_KEY): each side then proves to the other that\n"
	"it holds the key (HMAC-SHA256 challenge-response) before any data moves.\n"
	"The key authenticates peers; it does not encrypt the data.\n"
	"Refuses to overwrite an existing FILE.\n",
	.sections = {
		{ G_OUTPUT, "Options" },
	},
	.epilogue =
	"Exit status: 0 when the key was written, 1 when it could not be (the\n"
	"reason is printed; an existing FILE is never overwritten), 2 on bad\n"
	"usage.\n",
};

const struct cli_cmd cli_cmd_version = {
	.name = "version",
	.id = CLI_VERSION,
	.usage = "",
	.min_operands = 0,
	.max_operands = 0,
	.operands_hint = "takes no arguments",
	.about =
	"Print \"ferry\" and the version it was built as, such as `ferry 0.1.0`.\n"
	"`ferry --version` does the same.\n",
	.sections = {
		{ G_OUTPUT, "Options" },
	},
	.epilogue =
	"Exit status: 0.\n",
};

const struct cli_cmd cli_cmd_stage = {
	.like = "a hand-split `ferry send` per node; xrdcp, bbcp in a job script",
	.name = "stage",
	.id = CLI_STAGE,
	.usage = "[options] SRC... ferry://HOST[:PORT]/DEST\n"
		 "[ferry://HOST2[:PORT]/DEST ...]\n"
		 "(started by mpirun or srun: `mpirun -n N ferry-stage ...`)",
	.min_operands = 2,
	.max_operands = -1,
	.operands_hint = "give one or more SRCs and one or more ferry://HOST[:PORT]/DEST",
	.about =
	"Stage a dataset from many ranks of an MPI job to one or more receivers\n"
	"(`ferry recv --dir DIR` or `ferry serve`; DEST is a directory below its\n"
	"--dir or export root). Rank 0 walks the SRCs (files and directories, as\n"
	"`ferry send` does) and deals the files out across the ranks, balanced by\n"
	"bytes; a file larger than --split is cut into one range per rank on chunk\n"
	"boundaries, so that one large file uses every rank. Each rank runs\n"
	"libferry sessions to the receivers: its files go to its own destination\n"
	"(round robin, or --map), the ranges of a split file all go to one\n"
	"destination, which publishes the file once every range is in.\n"
	"\n"
	"Every chunk is crc32c-checked as it lands, every range by its adler32\n"
	"and crc32c, and every file whole (combined from its ranges) before it is\n"
	"published under its name; nothing partial ever appears there.\n"
	"\n"
	"Run it again after a failure (a rank killed, a receiver restarted): the\n"
	"deal is the same, files already published are confirmed by checksum and\n"
	"skipped, and of the rest only the chunks not yet verified move.\n"
	"\n"
	"Rank 0 prints one summary: files, bytes, Gb/s, a line per rank and each\n"
	"file that failed (--json: one JSON document).\n",
	.sections = {
		{ G_FILES },
		{ G_PIPELINE, "Each rank's sessions" },
		{ G_SECURITY },
		{ G_OUTPUT },
	},
	.epilogue =
	"Exit status (every rank): 0 when every file was published, skipped as\n"
	"identical, or (a range) landed for its receiver to publish; 1 when any\n"
	"file or session failed (rank 0 lists them); 2 on bad usage.\n"
	"\n"
	"Start the ranks unbound (mpirun --bind-to none, srun --cpu-bind=none)\n"
	"unless each has several CPUs: a rank runs several streams. The ranks of\n"
	"one node share its memory: without --slots each rank's ring starts from\n"
	"64 slots divided by the ranks on its node (at least 16); the path plan\n"
	"still grows it to hold a long path's bandwidth-delay product.\n"
	"\n"
	"Under Open MPI's mpirun with every rank on one node, ferry-stage sets\n"
	"OMPI_MCA_pml=ob1 (the layer Open MPI picks there) unless it is set:\n"
	"MPI starts 0.2 s sooner. Across nodes and under srun, MPI chooses.\n"
	"\n"
	"Example: mpirun -n 8 --bind-to none ferry-stage --key /etc/ferry/key \\\n"
	"             run42/ ferry://dtn1/store/run42 ferry://dtn2/store/run42\n"
	"         srun -n 16 --cpu-bind=none ferry-stage --transport verbs \\\n"
	"             /lustre/job/in ferry://cn-io1/in\n",
};
