#!/usr/bin/env python3
"""Write the fake host trees for tests/unit/test_doctor.c (see README).

Run from this directory after changing a tree; the output is checked in.
Paths and file contents follow real sysfs/procfs: class entries link to
their PCI function, files end in a newline.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def w(root, path, text):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(f"{text}\n")


def ln(root, path, target):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    os.symlink(target, p)


def mkdir(root, path):
    os.makedirs(os.path.join(root, path), exist_ok=True)


def limits(memlock, nofile=("1024", "524288")):
    rows = [
        ("Max cpu time", "unlimited", "unlimited", "seconds"),
        ("Max file size", "unlimited", "unlimited", "bytes"),
        ("Max open files", nofile[0], nofile[1], "files"),
        ("Max locked memory", memlock, memlock, "bytes"),
        ("Max address space", "unlimited", "unlimited", "bytes"),
    ]
    out = [f"{'Limit':<26}{'Soft Limit':<21}{'Hard Limit':<21}Units"]
    out += [f"{a:<26}{b:<21}{c:<21}{d}" for a, b, c, d in rows]
    return "\n".join(out)


def status(capeff):
    return "\n".join([
        "Name:\tferry", "State:\tR (running)", "Uid:\t1000\t1000\t1000\t1000",
        "CapInh:\t0000000000000000", f"CapPrm:\t{capeff}",
        f"CapEff:\t{capeff}", "CapBnd:\t000001ffffffffff",
    ])


def node(root, n, cpus):
    w(root, f"sys/devices/system/node/node{n}/cpulist", cpus)


def cpus(root, govs):
    for i, g in enumerate(govs):
        mkdir(root, f"sys/devices/system/cpu/cpu{i}/topology")
        if g:
            w(root, f"sys/devices/system/cpu/cpu{i}/cpufreq/scaling_governor", g)
    w(root, "sys/devices/system/cpu/online", f"0-{len(govs) - 1}")
    mkdir(root, "sys/devices/system/cpu/cpufreq")  # not a cpu


def pci(root, dev, numa, cur=None, mx=None, msi=(), slot=None):
    """A PCI function under sys/devices (dev is its path below it)."""
    d = f"sys/devices/{dev}"
    w(root, f"{d}/config", "")
    w(root, f"{d}/numa_node", numa)
    w(root, f"{d}/uevent",
      f"DRIVER=mlx5_core\nPCI_SLOT_NAME={slot or os.path.basename(dev)}")
    if cur:
        w(root, f"{d}/current_link_speed", cur[0])
        w(root, f"{d}/current_link_width", cur[1])
    if mx:
        w(root, f"{d}/max_link_speed", mx[0])
        w(root, f"{d}/max_link_width", mx[1])
    for irq in msi:
        w(root, f"{d}/msi_irqs/{irq}", "msix")
    return d


def netdev(root, name, devpath, mtu, oper, speed, driver=None):
    c = f"sys/class/net/{name}"
    if devpath:
        ln(root, f"{c}/device", f"../../../devices/{devpath}")
        mkdir(root, f"sys/devices/{devpath}/net/{name}")
    if driver:
        ln(root, f"sys/devices/{devpath}/driver",
           "../" * (devpath.count("/") + 2) + f"bus/pci/drivers/{driver}")
    w(root, f"{c}/mtu", mtu)
    w(root, f"{c}/operstate", oper)
    if speed is not None:
        w(root, f"{c}/speed", speed)


def ibdev(root, name, devpath, ports):
    """ports: {N: dict(state, phys, ll, gids=[(gid, type, ndev)])}"""
    c = f"sys/class/infiniband/{name}"
    ln(root, f"{c}/device", f"../../../devices/{devpath}")
    w(root, f"{c}/node_type", "1: CA")
    for n, p in ports.items():
        pp = f"{c}/ports/{n}"
        w(root, f"{pp}/state", p["state"])
        w(root, f"{pp}/phys_state", p["phys"])
        w(root, f"{pp}/link_layer", p["ll"])
        for i, (gid, typ, ndev) in enumerate(p["gids"]):
            w(root, f"{pp}/gids/{i}", gid)
            if typ:
                w(root, f"{pp}/gid_attrs/types/{i}", typ)
            if ndev:
                w(root, f"{pp}/gid_attrs/ndevs/{i}", ndev)


def hugepages(root, pools):
    for kb, nr, free in pools:
        d = f"sys/kernel/mm/hugepages/hugepages-{kb}kB"
        w(root, f"{d}/nr_hugepages", nr)
        w(root, f"{d}/free_hugepages", free)
        w(root, f"{d}/resv_hugepages", 0)


def sysctls(root, rmem, wmem, tcp_rmem, tcp_wmem, cc, avail, ssai, probe):
    w(root, "proc/sys/net/core/rmem_max", rmem)
    w(root, "proc/sys/net/core/wmem_max", wmem)
    w(root, "proc/sys/net/ipv4/tcp_rmem", tcp_rmem)
    w(root, "proc/sys/net/ipv4/tcp_wmem", tcp_wmem)
    w(root, "proc/sys/net/ipv4/tcp_congestion_control", cc)
    w(root, "proc/sys/net/ipv4/tcp_available_congestion_control", avail)
    w(root, "proc/sys/net/ipv4/tcp_slow_start_after_idle", ssai)
    w(root, "proc/sys/net/ipv4/tcp_mtu_probing", probe)


def interrupts(root, ncpu, lines, affinity):
    head = " " * 11 + "".join(f"CPU{i:<8}" for i in range(ncpu))
    out = [head]
    for irq, chip, name in lines:
        counts = "".join(f"{0:>11}" for _ in range(ncpu))
        out.append(f"{irq:>4}:{counts}  {chip}  {name}")
    out.append("NMI:" + "".join(f"{0:>11}" for _ in range(ncpu)) +
               "   Non-maskable interrupts")
    w(root, "proc/interrupts", "\n".join(out))
    for irq, cpul in affinity.items():
        w(root, f"proc/irq/{irq}/smp_affinity_list", cpul)


ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"
PF0 = "pci0000:3a/0000:3a:00.0/0000:3b:00.0"
PF1 = "pci0000:3a/0000:3a:00.0/0000:3b:00.1"
ONBOARD = "pci0000:00/0000:00:1f.6"
IB = "pci0000:5d/0000:5d:00.0/0000:5e:00.0"


def good(root):
    """A tuned 100G ConnectX host: passes everything."""
    node(root, 0, "0-7")
    node(root, 1, "8-15")
    cpus(root, ["performance"] * 16)
    pci(root, PF0, 1, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16),
        msi=(100, 101, 102))
    pci(root, ONBOARD, 0, ("2.5 GT/s PCIe", 1), ("2.5 GT/s PCIe", 1))
    netdev(root, "ens1f0np0", PF0, 9000, "up", 100000, "mlx5_core")
    netdev(root, "eno1", ONBOARD, 9000, "up", 1000, "igb")
    netdev(root, "lo", None, 65536, "unknown", None)
    netdev(root, "veth0", None, 1500, "up", 10000)
    ibdev(root, "mlx5_0", PF0, {1: dict(
        state="4: ACTIVE", phys="5: LinkUp", ll="Ethernet",
        gids=[("fe80:0000:0000:0000:0ac0:ebff:fe4d:0010", "IB/RoCE v1", "ens1f0np0"),
              ("fe80:0000:0000:0000:0ac0:ebff:fe4d:0010", "RoCE v2", "ens1f0np0"),
              ("0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1", "ens1f0np0"),
              ("0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "ens1f0np0"),
              (ZERO, None, None)])})
    hugepages(root, [(2048, 1024, 1024), (1048576, 0, 0)])
    w(root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
    w(root, "proc/self/limits", limits("unlimited"))
    w(root, "proc/self/status", status("0000000000000000"))
    sysctls(root, 1073741824, 1073741824, "4096\t131072\t1073741824",
            "4096\t16384\t1073741824", "bbr", "reno cubic bbr", 0, 1)
    interrupts(root, 4, [
        (16, "IO-APIC   16-fasteoi", "ehci_hcd:usb1"),
        (100, "IR-PCI-MSIX-0000:3b:00.0    0-edge", "mlx5_async0@pci:0000:3b:00.0"),
        (101, "IR-PCI-MSIX-0000:3b:00.0    1-edge", "mlx5_comp0@pci:0000:3b:00.0"),
        (102, "IR-PCI-MSIX-0000:3b:00.0    2-edge", "mlx5_comp1@pci:0000:3b:00.0"),
        # not in msi_irqs: found by its PCI address
        (103, "IR-PCI-MSIX-0000:3b:00.0    3-edge", "mlx5_comp2@pci:0000:3b:00.0"),
        # found by its netdev name
        (120, "IR-PCI-MSI-0000:00:1f.6    0-edge", "eno1"),
        (121, "IR-PCI-MSI-0000:00:1f.7    0-edge", "veno10"),
    ], {16: "0-15", 100: "8-15", 101: "8", 102: "9", 103: "10-11",
        120: "0-7", 121: "12"})


def bad(root):
    """The same hardware badly set up: a WARN or FAIL for every check."""
    node(root, 0, "0-7")
    node(root, 1, "8-15")
    cpus(root, ["performance"] * 4 + ["powersave"] * 12)
    # ens1f0np0: no NUMA node on a 2-node host, down, no IP address
    pci(root, PF0, -1, ("8.0 GT/s PCIe", 8), ("16.0 GT/s PCIe", 16),
        msi=(100, 101))
    # ens1f1np1: up, but a narrow slow slot, RoCE v1 only, IRQs anywhere
    pci(root, PF1, 0, ("8.0 GT/s PCIe", 8), ("16.0 GT/s PCIe", 16),
        msi=(200, 201, 202))
    pci(root, ONBOARD, 0, ("2.5 GT/s PCIe", 1), ("2.5 GT/s PCIe", 1))
    pci(root, IB, 1, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
    netdev(root, "ens1f0np0", PF0, 1500, "down", -1, "mlx5_core")
    netdev(root, "ens1f1np1", PF1, 1500, "up", 100000, "mlx5_core")
    netdev(root, "eno1", ONBOARD, 1500, "up", 1000, "igb")
    netdev(root, "lo", None, 65536, "unknown", None)
    ibdev(root, "mlx5_0", PF0, {1: dict(
        state="1: DOWN", phys="3: Disabled", ll="Ethernet",
        gids=[(ZERO, None, None)] * 4)})
    ibdev(root, "mlx5_1", PF1, {1: dict(
        state="4: ACTIVE", phys="5: LinkUp", ll="Ethernet",
        gids=[("fe80:0000:0000:0000:0ac0:ebff:fe4d:0011", "IB/RoCE v1", "ens1f1np1"),
              ("0000:0000:0000:0000:0000:ffff:0a00:0002", "IB/RoCE v1", "ens1f1np1"),
              (ZERO, None, None)])})
    # InfiniBand, no subnet manager: INIT, no GID, no IPoIB netdev
    ibdev(root, "mlx5_2", IB, {1: dict(
        state="2: INIT", phys="5: LinkUp", ll="InfiniBand",
        gids=[(ZERO, None, None)] * 2)})
    hugepages(root, [(2048, 0, 0), (1048576, 0, 0)])
    w(root, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]")
    w(root, "proc/self/limits", limits("8388608", ("1024", "4096")))
    w(root, "proc/self/status", status("0000000000000000"))
    sysctls(root, 212992, 212992, "4096\t131072\t6291456",
            "4096\t16384\t4194304", "reno", "reno cubic", 1, 0)
    interrupts(root, 4, [
        (100, "IR-PCI-MSIX-0000:3b:00.0    0-edge", "mlx5_async0@pci:0000:3b:00.0"),
        (101, "IR-PCI-MSIX-0000:3b:00.0    1-edge", "mlx5_comp0@pci:0000:3b:00.0"),
        (200, "IR-PCI-MSIX-0000:3b:00.1    0-edge", "mlx5_async0@pci:0000:3b:00.1"),
        (201, "IR-PCI-MSIX-0000:3b:00.1    1-edge", "mlx5_comp0@pci:0000:3b:00.1"),
        (202, "IR-PCI-MSIX-0000:3b:00.1    2-edge", "mlx5_comp1@pci:0000:3b:00.1"),
    ], {100: "0-15", 101: "0-15", 200: "0-15", 201: "0-7", 202: "8"})


def vm(root):
    """A virtual machine: virtio NIC, no RDMA, no NUMA, no cpufreq."""
    cpus(root, [None, None])
    virtio = "pci0000:00/0000:00:03.0/virtio2"
    pci(root, "pci0000:00/0000:00:03.0", -1, msi=(37, 38, 39))
    mkdir(root, f"sys/devices/{virtio}")
    netdev(root, "eth0", virtio, 1500, "up", -1, "virtio_net")
    netdev(root, "lo", None, 65536, "unknown", None)
    hugepages(root, [(2048, 128, 100)])
    w(root, "proc/self/limits", limits("65536"))
    w(root, "proc/self/status", status("0000000000000000"))
    sysctls(root, 212992, 212992, "4096\t131072\t6291456",
            "4096\t16384\t4194304", "cubic", "reno cubic", 1, 0)
    interrupts(root, 2, [
        (37, "PCI-MSIX-0000:00:03.0   0-edge", "virtio2-config"),
        (38, "PCI-MSIX-0000:00:03.0   1-edge", "virtio2-input.0"),
        (39, "PCI-MSIX-0000:00:03.0   2-edge", "virtio2-output.0"),
    ], {37: "0-1", 38: "0-1", 39: "0-1"})


def capable(root):
    """Only proc/self (a low memlock limit that CAP_IPC_LOCK lifts) and a
    ConnectX netdev whose RDMA driver is not loaded."""
    cx = "pci0000:80/0000:81:00.0"
    mkdir(root, f"sys/devices/{cx}")
    netdev(root, "ens5np0", cx, 9000, "up", 100000, "mlx5_core")
    w(root, "proc/self/limits", limits("8388608"))
    w(root, "proc/self/status", status("000001ffffffffff"))


def main():
    for name, fn in [("good", good), ("bad", bad), ("vm", vm),
                     ("capable", capable)]:
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        fn(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
