#!/usr/bin/env python3
"""The README's table of iperf3 and xrdcp options and their ferry
equivalents, made from what `ferry CMD --help` prints (itself made from
the option table, whose rows name the iperf3 and xrdcp options that mean
the same: "(iperf3 -P, --parallel; xrdcp -S, --streams)" after an
option's help, "Instead of: ..." after a command's).

  optmap.py --ferry build/apps/ferry/ferry --write README.md
  optmap.py --ferry build/apps/ferry/ferry --check README.md

--write replaces what lies between the README's markers; --check exits 1
(printing the difference) when that is not what the option table says.
"""
import argparse
import difflib
import re
import subprocess
import sys

COMMANDS = ["bench", "recv", "send", "cp"]
BEGIN = "<!-- optmap: made by tools/optmap.py from the option table -->"
END = "<!-- optmap end -->"
OPT = re.compile(r"^  (-\w, |    )--([\w-]+)( \S+)?\s{2,}(.*)$")
LIKE = re.compile(r"\(((?:iperf3|xrdcp) [^()]*)\)$")


def help_of(ferry, cmd):
    return subprocess.run([ferry, cmd, "--help"], check=True,
                          capture_output=True, text=True).stdout


def options(text):
    """(ferry's spelling of the option, its paragraph) for each option."""
    out, cur = [], None
    for ln in text.splitlines():
        m = OPT.match(ln)
        if m:
            letter = m.group(1).strip().rstrip(",")
            name = "--" + m.group(2)
            cur = [f"{letter}, {name}" if letter else name, m.group(4)]
            out.append(cur)
        elif cur and ln.startswith(" " * 24):
            cur[1] += " " + ln.strip()
        else:
            cur = None
    return out


def table(ferry):
    rows = {}  # (tool, their option) -> (ferry's, [commands])
    cmds = []
    for cmd in COMMANDS:
        text = help_of(ferry, cmd)
        m = re.search(r"^Instead of: (.*)\.$", text, re.M)
        if m:
            cmds.append((m.group(1), f"ferry {cmd}"))
        for mine, para in options(text):
            m = LIKE.search(para)
            if not m:
                continue
            alias = re.search(r"; (--[\w-]+) is the same", para)
            if alias:
                mine += f" ({alias.group(1)})"
            for theirs in m.group(1).split("; "):
                tool, opt = theirs.split(" ", 1)
                key = (tool, opt)
                got = rows.setdefault(key, (mine, []))
                if got[0] != mine:
                    sys.exit(f"optmap: {tool} {opt} is {got[0]} and {mine}")
                got[1].append(cmd)
    lines = [BEGIN, "",
             "| instead of | ferry | in |", "|---|---|---|"]
    for theirs, mine in cmds:
        lines.append(f"| {', '.join(f'`{t}`' for t in theirs.split('; '))} "
                     f"| `{mine}` | |")
    for (tool, opt), (mine, where) in sorted(rows.items()):
        lines.append(f"| `{tool} {opt}` | `{mine}` | {', '.join(where)} |")
    lines += ["", END]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ferry", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write")
    g.add_argument("--check")
    a = ap.parse_args()
    path = a.write or a.check
    readme = open(path, encoding="utf-8").read().split("\n")
    try:
        b, e = readme.index(BEGIN), readme.index(END)
    except ValueError:
        sys.exit(f"optmap: {path} has no markers ({BEGIN} ... {END})")
    want = table(a.ferry)
    have = readme[b:e + 1]
    if a.write:
        open(path, "w", encoding="utf-8").write(
            "\n".join(readme[:b] + want + readme[e + 1:]))
        return 0
    if have != want:
        sys.stdout.writelines(difflib.unified_diff(
            [x + "\n" for x in have], [x + "\n" for x in want],
            path, "the option table"))
        print(f"optmap: {path}'s table differs from the option table; "
              f"run tools/optmap.py --ferry FERRY --write {path}")
        return 1
    print(f"optmap: {path}'s table matches the option table "
          f"({len(want) - 6} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
