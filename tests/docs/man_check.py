#!/usr/bin/env python3
"""Every command, option and exported symbol has a man page, and every page
renders without a warning.

  man_check.py --src SRCDIR --man MANDIR --lib libferry.so
               [--ferry ferry] [--wanem ferry-wanem]

Fails (exit 1) with one line per gap:
  - a subcommand of apps/ferry/main.c (its cmds[] table, or a command
    help_main lists) without ferry-CMD.1;
  - a --long option a command takes (its rows in the option table,
    apps/ferry/opts_table.c, hidden ones too), or of its --help output,
    missing from its page;
  - a symbol libferry.so exports that is internal (ferry__*), unprefixed,
    or on no libferry page's NAME line; a function a page names that the
    library does not export;
  - a page `man --warnings -l` warns about.
Exits 77 (skip) when man(1) is not installed, after the other checks.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import mkman  # noqa: E402  (the generator's own C-string reader)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def page_text(path):
    """A page's roff with escapes undone far enough to search for --opt."""
    s = open(path, encoding="utf-8").read()
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")
    return re.sub(r"\\f[BIRP]", "", s)


def has_option(text, opt):
    return re.search(r"(?<![\w-])--%s(?![\w-])" % re.escape(opt), text)


def longopts(src, cmd):
    """Long option names of a command: the rows of ferry's option table
    (apps/ferry/opts_table.c) it takes, hidden ones included; for another
    program, the getopt tables of its C file."""
    text = open(src, encoding="utf-8").read()
    if not cmd:
        names = []
        for t in re.finditer(r"struct option\s+\w+\[\]\s*=\s*\{(.*?)\};",
                             text, re.S):
            names += re.findall(r'\{\s*"([\w-]+)"\s*,', t.group(1))
        return names
    sets = dict(re.findall(r"#define (\w+) \(([\w |]+)\)", text))

    def bits(expr):
        out = set()
        for w in re.findall(r"\w+", expr):
            out |= bits(sets[w]) if w in sets else {w}
        return out
    bit = "CLI_" + ("RECV" if cmd == "serve" else cmd.upper())
    return [m.group(1) for m in re.finditer(
        r'\{ \.name = "([\w-]+)".*?\.cmds = ([\w |]+?),', text, re.S)
        if bit in bits(m.group(2))]


def help_options(exe, args):
    try:
        out = subprocess.run([exe] + args, capture_output=True, text=True,
                             timeout=30).stdout
    except OSError as e:
        fail("%s %s: %s" % (exe, " ".join(args), e))
        return []
    return re.findall(r"(?<![\w-])--([A-Za-z][\w-]*)", out)


def check_commands(a):
    main_c = os.path.join(a.src, "apps/ferry/main.c")
    text = open(main_c, encoding="utf-8").read()
    table = re.search(r"\bcmds\[\]\s*=\s*\{(.*?)\};", text, re.S).group(1)
    cmds = dict(re.findall(r'\{\s*"([\w-]+)"\s*,\s*(\w+)\s*\}', table))
    listed = mkman.command_summaries(main_c)
    top = page_text(os.path.join(a.man, "ferry.1"))
    m = re.search(r"^\.SH \"?SEE ALSO\"?\n(.*?)(?=^\.SH|\Z)", top, re.S | re.M)
    see_also = m.group(1) if m else ""
    for c in sorted(set(cmds) | set(listed)):
        if c not in listed:
            fail("ferry %s: not in help_main's Commands list" % c)
        page = os.path.join(a.man, "ferry-%s.1" % c)
        if not os.path.exists(page):
            fail("ferry %s: no man page ferry-%s.1" % (c, c))
            continue
        if "ferry-%s(1)" % c not in see_also:
            fail("ferry.1's SEE ALSO does not name ferry-%s(1)" % c)
        check_usage(a, c, page)
    return cmds


def check_usage(a, c, page):
    """The page's SYNOPSIS and `ferry CMD --help` name the command typed
    (ferry serve is ferry recv under another name)."""
    m = re.search(r'\.SH "SYNOPSIS"\n\.nf\n(.*)\n', page_text(page))
    if not m or not m.group(1).startswith("ferry %s" % c):
        fail("ferry-%s.1: its SYNOPSIS begins %r" %
             (c, m.group(1) if m else None))
    if not a.ferry:
        return
    out = subprocess.run([a.ferry, c, "--help"], capture_output=True,
                         text=True, timeout=30).stdout
    if not out.startswith("usage: ferry %s" % c):
        fail("ferry %s --help begins %r" % (c, out.split("\n")[0]))


def check_options(a, cmds):
    table = os.path.join(a.src, "apps/ferry/opts_table.c")
    pages = []
    for c in sorted(cmds):
        pages.append(("ferry-%s" % c, table, c, [a.ferry, c, "--help"]
                      if a.ferry else None))
    pages.append(("ferry-wanem", os.path.join(a.src, "apps/wanem/main.c"),
                  None, [a.wanem, "--help"] if a.wanem else None))
    n = 0
    for name, src, cmd, run in pages:
        path = os.path.join(a.man, name + ".1")
        if not os.path.exists(path):
            fail("%s: no man page" % name)
            continue
        text = page_text(path)
        opts = longopts(src, cmd)
        if cmd and not opts:
            fail("%s: no rows in %s" % (name, os.path.relpath(src, a.src)))
        if run:
            opts += help_options(run[0], run[1:])
        for o in sorted(set(opts)):
            n += 1
            if o == "help" and not has_option(text, o):
                continue  # every command takes --help; the page is its text
            if not has_option(text, o):
                fail("%s: option --%s (%s) is not on its page" %
                     (name, o, os.path.relpath(src, a.src)))
    print("options: %d checked on %d pages" % (n, len(pages)))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] != "A":
            syms.append(f[2].split("@")[0])
    return syms


def check_symbols(a):
    names = {}
    for p in glob.glob(os.path.join(a.man, "libferry-*.3")):
        for n in mkman.page_names(p):
            names[n] = os.path.basename(p)
    syms = exported(a.lib)
    for s in sorted(set(syms)):
        if s.startswith("ferry__"):
            fail("libferry.so exports internal %s (lib/libferry.map)" % s)
        elif not s.startswith("ferry_"):
            fail("libferry.so exports %s, outside the ferry_ API" % s)
        elif s not in names:
            fail("libferry.so exports %s, which no public header declares "
                 "and no page documents" % s)
    for n, p in sorted(names.items()):
        if n not in syms:
            fail("%s names %s, which libferry.so does not export" % (p, n))
    print("symbols: %d exported, %d on pages" % (len(set(syms)), len(names)))


def check_render(a):
    man = shutil.which("man")
    if not man:
        return "man(1) is not installed (tools/deps.sh installs man-db)"
    pages = sorted(glob.glob(os.path.join(a.man, "*.[13]")))
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat",
               PAGER="cat")
    for p in pages:
        r = subprocess.run([man, "--warnings", "-l", p], capture_output=True,
                           text=True, env=env)
        if r.returncode != 0 or r.stderr.strip():
            fail("%s: man --warnings -l: %s" %
                 (os.path.basename(p), r.stderr.strip() or
                  "exit %d" % r.returncode))
    print("render: %d pages" % len(pages))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--man", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--ferry")
    ap.add_argument("--wanem")
    a = ap.parse_args()
    cmds = check_commands(a)
    check_options(a, cmds)
    check_symbols(a)
    skip = check_render(a)
    if failures:
        print("%d gaps" % len(failures))
        return 1
    if skip:
        print("SKIP rendering: " + skip, file=sys.stderr)
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
