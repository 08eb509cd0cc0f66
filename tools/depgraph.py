#!/usr/bin/env python3
"""The shape of libferry, drawn from its own sources and build.

Folder edges come from the #include lines of lib/ (a file in lib/A
including "B/x.h" is an edge A -> B; "ferry/x.h" is the public API, below
everything). File edges come from the build: for each object of
libferry.a (compile_commands.json maps it to its source), the ferry_
names it uses and the ones it defines, read with nm.

Fails (exit 1) when
  - a folder includes a folder of a higher layer (LAYERS below), or two
    folders of one layer include each other,
  - headers include each other in a loop,
  - source files call each other in a loop (with --build),
except the loops in KNOWN, which are named there with their owner's
reason. Prints the folder graph (--dot: as Graphviz).

  tools/depgraph.py [--root SRC] [--build BUILDDIR] [--dot] [--quiet]
"""
import argparse
import json
import os
import re
import subprocess
import sys

# Lowest first. A folder may include its own layer's folders and any
# lower one; include/ferry (the public API) is below them all.
LAYERS = [
    ['util', 'sum', 'stats'],
    ['mem', 'topo', 'metrics'],
    ['ctrl', 'io'],
    ['xport', 'rocedump', 'doctor'],
    ['pipe'],
    ['files', 'osu'],
    ['daemon'],
]

# Loops that are someone else's to break, each with where it stands.
KNOWN_FOLDER_LOOPS = [
]
KNOWN_FILE_LOOPS = [
    # none: files of lib/ call one way
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    """lib/pipe/client.c -> pipe; include/ferry/x.h -> ferry."""
    parts = path.split('/')
    return parts[1] if parts[0] in ('lib', 'include') else None


def sources(root):
    out = []
    for top in ('lib', 'include'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(('.c', '.h')):
                    out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def resolve(root, src, inc):
    for cand in (os.path.join(os.path.dirname(src), inc),
                 os.path.join('lib', inc), os.path.join('include', inc)):
        cand = os.path.normpath(cand)
        if os.path.exists(os.path.join(root, cand)):
            return cand
    return None  # generated (xport_list.h) or a system header


def include_graph(root, files):
    g = {}
    for f in files:
        with open(os.path.join(root, f), encoding='utf-8',
                  errors='replace') as fh:
            text = fh.read()
        g[f] = sorted({r for i in INCLUDE.findall(text)
                       if (r := resolve(root, f, i)) and r != f})
    return g


def sccs(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def call_graph(root, build):
    """Source file -> the source files whose ferry_ names it uses."""
    with open(os.path.join(build, 'compile_commands.json')) as fh:
        cmds = json.load(fh)
    objs = {}
    for c in cmds:
        src = os.path.relpath(os.path.join(c['directory'], c['file']), root)
        if (src.startswith('lib/') and 'libferry.a.p' in c['output'] and
                not src.startswith('..')):
            objs[os.path.join(c['directory'], c['output'])] = src
    defs, uses = {}, {}
    for obj, src in objs.items():
        if not os.path.exists(obj):
            continue
        nm = subprocess.run(['nm', obj], capture_output=True, text=True,
                            check=True).stdout
        for line in nm.splitlines():
            f = line.split()
            if len(f) < 2 or not f[-1].startswith('ferry'):
                continue
            if f[-2] == 'U':
                uses.setdefault(src, set()).add(f[-1])
            elif f[-2] in 'TDBR':
                defs[f[-1]] = src
    return {s: sorted({defs[n] for n in u if n in defs and defs[n] != s})
            for s, u in uses.items()}


def rank(folder):
    if folder == 'ferry':
        return -1
    for i, layer in enumerate(LAYERS):
        if folder in layer:
            return i
    return None


def known_file_loop(comp):
    return all(any(f.startswith(k) for k in KNOWN_FILE_LOOPS) for f in comp)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--root', default=os.path.dirname(here))
    ap.add_argument('--build', help='build directory: check calls too')
    ap.add_argument('--dot', action='store_true', help='print Graphviz')
    ap.add_argument('--quiet', action='store_true', help='only problems')
    a = ap.parse_args()

    files = sources(a.root)
    inc = include_graph(a.root, files)
    bad = []

    edges = {}
    for f, tos in inc.items():
        for t in tos:
            ff, ft = folder_of(f), folder_of(t)
            if ff and ft and ff != ft and ff != 'ferry':
                edges.setdefault((ff, ft), []).append(f + ' -> ' + t)
    folders = sorted({x for e in edges for x in e} |
                     {folder_of(f) for f in files} - {None})
    for ff in folders:
        if ff != 'ferry' and rank(ff) is None:
            bad.append('lib/%s is in no layer: add it to LAYERS in %s'
                       % (ff, os.path.relpath(__file__, a.root)))
    for (ff, ft), why in sorted(edges.items()):
        rf, rt = rank(ff), rank(ft)
        if (rf is None or rt is None or rt < rf or
                {ff, ft} in KNOWN_FOLDER_LOOPS):
            continue
        if rt > rf or (ft, ff) in edges:
            bad.append('back edge %s -> %s (%s, layer %d -> %d): %s'
                       % (ff, ft, 'up' if rt > rf else 'both ways',
                          rf, rt, why[0]))

    hdr = {f: [t for t in tos if t.endswith('.h')]
           for f, tos in inc.items() if f.endswith('.h')}
    for comp in sccs(hdr):
        if not known_file_loop(comp):
            bad.append('headers include each other: ' + ' '.join(comp))

    if a.build:
        for comp in sccs(call_graph(a.root, a.build)):
            if not known_file_loop(comp):
                bad.append('files call each other: ' + ' '.join(comp))

    if not a.quiet:
        if a.dot:
            print('digraph libferry {\n  rankdir=BT; node [shape=box];')
            for i, layer in enumerate(LAYERS):
                names = ' '.join('"%s";' % f for f in layer if f in folders)
                print('  { rank=same; %s }' % names)
            for (ff, ft) in sorted(edges):
                if ft != 'ferry':
                    print('  "%s" -> "%s";' % (ff, ft))
            print('}')
        else:
            print('libferry folders, top layer first (-> includes; every '
                  'folder also uses include/ferry):')
            for i in reversed(range(len(LAYERS))):
                for f in LAYERS[i]:
                    if f not in folders:
                        continue
                    tos = sorted(t for (x, t) in edges
                                 if x == f and t != 'ferry')
                    print('  %d %-9s -> %s' % (i, f, ' '.join(tos) or '-'))
    for b in bad:
        print('depgraph: ' + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
