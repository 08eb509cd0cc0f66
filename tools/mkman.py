#!/usr/bin/env python3
"""Man pages from the texts they document, so the two never drift.

  mkman.py help --exe build/apps/ferry/ferry --args "bench --help" \\
      --name ferry-bench --prog "ferry bench" [--summary-from main.c] \\
      [--in docs/man/ferry-bench.1.in] --version V -o ferry-bench.1
      A section 1 page from what a built program's --help prints (ferry's
      come from its option table), or with --src FILE.c --var NAME from a
      --help string in a C source file (ferry-wanem).
  mkman.py header --header include/ferry/session.h \\
      [--in docs/man/libferry-session.3.in] --version V -o libferry-session.3
      A section 3 page from a public header: its comments and declarations.
  mkman.py overview --name libferry --summary TEXT [--in ...] --version V \
      -o libferry.3 HEADER...
      libferry(3): the hand-written overview and a list of module pages.
  mkman.py names PAGE...
      The names each page's NAME line gives, one per line (what mandb
      indexes and what `links` makes .so pages for).
  mkman.py links MAN3DIR
      At install: for every name in a libferry-*.3 page's NAME line, a
      NAME.3 holding ".so man3/PAGE" (so `man ferry_bench` works).

The help text's own layout carries the structure: "usage:" lines become
SYNOPSIS, prose DESCRIPTION, "Heading:" groups of "-x, --opt ARG  text"
lines OPTIONS (subsections), "Exit status:" EXIT STATUS, "Example:"
EXAMPLES. A hand-written FILE.in adds what --help does not say: text before
its first .SH joins DESCRIPTION, a .SH with the title of a generated section
joins that section, any other .SH is placed in the usual order. The line
'.\\" mkman-notes: TITLE' names the section for prose after the options
(default NOTES).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

ORDER = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "NOTES",
         "OUTPUT", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES",
         "SEE ALSO"]


# ---- C sources ----

def c_string(src, var):
    """The value of `const char VAR[] = "..." "...";` in a C file."""
    text = open(src, encoding="utf-8").read()
    m = re.search(r"\b%s\s*\[\s*\]\s*=" % re.escape(var), text)
    if not m:
        sys.exit("mkman: %s: no string %s" % (src, var))
    out, i = [], m.end()
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text) or text[i] != '"':
            break
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        out.append(text[i + 1:j])
        i = j + 1
    if not out or text[i] != ";":
        sys.exit("mkman: %s: %s is not a plain string literal" % (src, var))
    esc = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}
    return re.sub(r"\\(.)", lambda e: esc.get(e.group(1), e.group(1)),
                  "".join(out))


def command_summaries(main_c):
    """{command: one-line summary} from help_main's Commands list."""
    s = c_string(main_c, "help_main")
    block = s.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    out = {}
    for line in block.splitlines():
        m = re.match(r"\s+(\S+)\s{2,}(.*)", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


# ---- roff ----

def esc(s, code=False):
    """Escape text for roff: backslashes, and dashes that are not hyphens
    inside a word (options, minus signs) become \\-."""
    s = s.replace("\\", "\\e")
    if code:
        return s.replace("-", "\\-")
    return re.sub(r"(?<![A-Za-z0-9])-|-(?![A-Za-z0-9])", r"\\-", s)


OPTWORD = r"--?[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"
TOKEN = re.compile(r"`([^`]+)`|(?<![\w\-./=+<])(" + OPTWORD + ")")


def inline(s):
    """Prose to roff: `code` and --options in bold."""
    out, pos = [], 0
    for m in TOKEN.finditer(s):
        out.append(esc(s[pos:m.start()]))
        text = m.group(1) or m.group(2)
        out.append("\\fB" + esc(text, code=True) + "\\fR")
        pos = m.end()
    out.append(esc(s[pos:]))
    return "".join(out)


def line_ok(s):
    """Guard a text line against being read as a request, and an "e.g."
    at its end against being read as a sentence's end."""
    if re.search(r"\b(e\.g|i\.e)\.$", s):
        s += "\\&"
    return "\\&" + s if s[:1] in (".", "'") else s


def term(t):
    """An option or item tag: options bold, their arguments italic."""
    if not t.startswith("-"):
        return "\\fB" + esc(t) + "\\fR"
    parts = []
    for alt in t.split(", "):
        words = alt.split(" ", 1)
        p = "\\fB" + esc(words[0], code=True) + "\\fR"
        if len(words) > 1:
            p += " \\fI" + esc(words[1]) + "\\fR"
        parts.append(p)
    return ", ".join(parts)


def indent(line):
    return len(line) - len(line.lstrip(" "))


def literal(lines, dedent):
    """Lines kept as they are, indented 4 more when they fit in 80
    columns with the page's own indent of 7."""
    width = max(len(l) - dedent for l in lines)
    out = [".PP", ".RS %d" % max(0, min(4, 73 - width)), ".nf"]
    out += [line_ok(esc(l[dedent:], code=False)) for l in lines]
    return out + [".fi", ".RE"]


def paragraphs(lines):
    """Lines split at blank lines."""
    paras, cur = [], []
    for l in lines:
        if l.strip():
            cur.append(l.rstrip())
        elif cur:
            paras.append(cur)
            cur = []
    return paras + [cur] if cur else paras


def prose(lines):
    """Paragraphs of text with "- " bullets and indented literal blocks (a
    block whose last line does not end a sentence: formats, diagrams)."""
    out = []
    for p in paragraphs(lines):
        base = min(indent(l) for l in p)
        if base > 0 and not re.search(r"[.;]\)?$", p[-1]) and \
                not p[0].lstrip().startswith("- "):
            out += literal(p, base)
            continue
        out += [".PP"] if base == 0 else [".PP", ".RS %d" % base]
        i, in_list = 0, False
        while i < len(p):
            l = p[i]
            m = re.match(r"(\s*)- (.*)", l)
            if m:
                ind = len(m.group(1))
                in_list = True
                out.append(".IP \\(bu 2")
                out.append(line_ok(inline(m.group(2))))
                i += 1
                while i < len(p) and indent(p[i]) > ind and \
                        not p[i].lstrip().startswith("- "):
                    out.append(line_ok(inline(p[i].strip())))
                    i += 1
                continue
            if in_list:
                out.append(".PP")
                in_list = False
            elif out and not out[-1].startswith(".") and \
                    indent(l) > base and not indent(p[i - 1]) > base:
                out.append(".br")
            out.append(line_ok(inline(l.strip())))
            i += 1
        if base > 0:
            out.append(".RE")
    return out


def desc_column(lines):
    """Column where an item list's texts start: the most common of where
    the text after a tag's gap starts and the indent of continuations."""
    lines = [l for l in lines if l.strip()]
    base = min(indent(l) for l in lines)
    cols = []
    for l in lines:
        m = re.match(r"(\s*\S(?:\S| (?! ))*\s{2,})\S", l)
        if m and indent(l) <= base + 4:
            cols.append(len(m.group(1)))
        elif indent(l) > base + 4:
            cols.append(indent(l))
    return max(set(cols), key=cols.count) if cols else None


def tag_ok(t):
    """Does t read as an item's tag: options with at most one argument
    each, or a word or two?"""
    if "  " in t:
        return False
    if t.startswith("-"):
        return all(len(alt.split()) <= 2 and alt.startswith("-")
                   for alt in t.split(", "))
    return len(t.split()) <= 2


def split_item(line, col, base):
    """(tag, text) of an item line ("" when its text starts on the next
    line), or None for a line of prose or a continuation."""
    if not line.strip() or indent(line) > base + 4 or \
            (col and indent(line) >= col):
        return None
    if col and len(line) > col and line[col - 1] == " " and \
            line[col] != " " and tag_ok(line[:col].strip()):
        return line[:col].strip(), line[col:].strip()
    m = re.match(r"\s*(\S(?:\S| (?! ))*)\s{2,}(\S.*)$", line)
    if m and tag_ok(m.group(1)):
        return m.group(1), m.group(2)
    t = line.strip()
    if t.startswith("-") and tag_ok(t):
        return t, ""
    return None


def items(lines, note_cmds=False):
    """An item list ("  TAG   text" lines, continuations indented to the
    text column); lines at the tags' indent that are no item are prose."""
    lines = [l for l in lines if l.strip()]
    col = desc_column(lines)
    base = min(indent(l) for l in lines)
    out, i = [], 0
    while i < len(lines):
        it = split_item(lines[i], col, base)
        if not it:
            j = i
            while j < len(lines) and not split_item(lines[j], col, base):
                j += 1
            out += prose([l[base:] for l in lines[i:j]])
            i = j
            continue
        out += [".TP", term(it[0])]
        if it[1]:
            out.append(line_ok(inline(it[1])))
        i += 1
        while i < len(lines) and indent(lines[i]) > base + 4 and \
                not split_item(lines[i], col, base):
            out.append(line_ok(inline(lines[i].strip())))
            i += 1
        if note_cmds and not it[0].startswith("-"):
            out += [".br", "See \\fBferry\\-%s\\fR(1)." % esc(it[0], code=True)]
    return out


def is_item_group(lines):
    """Is every line an item or an item's continuation?"""
    lines = [l for l in lines if l.strip()]
    col = desc_column(lines)
    base = min(indent(l) for l in lines)
    return split_item(lines[0], col, base) is not None and \
        all(split_item(l, col, base) or indent(l) > base + 4 for l in lines)


def parse_help(text, prog):
    """The --help text as {section: [roff lines]}."""
    sec = {k: [] for k in ORDER}
    lines = text.rstrip("\n").split("\n")
    # usage: the first line and the indented lines after it
    if not lines[0].startswith("usage: "):
        sys.exit("mkman: %s --help does not start with usage:" % prog)
    usage = [lines[0][len("usage: "):]]
    i = 1
    while i < len(lines) and lines[i].startswith(" "):
        usage.append(lines[i][len("usage: "):])
        i += 1
    # a command under another name (ferry serve is ferry recv) prints its
    # usage line with the name typed: so does its page
    words, pw = usage[0].split(" "), prog.split(" ")
    if len(pw) == 2 and len(words) >= 2 and words[0] == pw[0] and \
            words[1] != pw[1]:
        usage[0] = " ".join(pw + words[2:])
    syn = [".nf"]
    for u in usage:
        u = u.rstrip()
        if u.startswith(prog):
            syn.append("\\fB" + esc(prog) + "\\fR" + inline(u[len(prog):]))
        else:
            syn.append(line_ok(inline(u)))
    sec["SYNOPSIS"] = syn + [".fi"]

    # blocks: a heading line ("Word words:" alone) owns the indented
    # paragraphs after it; other paragraphs stand alone
    paras = paragraphs(lines[i:])
    seen_opts = False
    k = 0
    while k < len(paras):
        p = paras[k]
        head = p[0]
        is_head = (indent(head) == 0 and head.endswith(":") and
                   len(head) < 72 and
                   all(indent(l) > 0 for l in p[1:]))
        if is_head:
            body = p[1:]
            k += 1
            while k < len(paras) and indent(paras[k][0]) > 0:
                body += [""] + paras[k]
                k += 1
            title = head[:-1]
            col = desc_column(body)
            base = min(indent(x) for x in body if x.strip())
            opts = any(l.lstrip().startswith("-") and
                       split_item(l, col, base) for l in body)
            if title == "Commands":
                sec["COMMANDS"] += items(body, note_cmds=True)
            elif opts:
                seen_opts = True
                if title != "Options":
                    sec["OPTIONS"] += [".SS " + quote(title)]
                sec["OPTIONS"] += items(body)
            else:
                where = "NOTES" if seen_opts else "DESCRIPTION"
                sec[where] += [".SS " + quote(title)]
                sec[where] += (items(body) if is_item_group(body)
                               else prose(body))
            continue
        k += 1
        m = re.match(r"(Exit status|Examples?): *(.*)", head)
        if m and m.group(1) == "Exit status":
            sec["EXIT STATUS"] += prose([m.group(2)] + p[1:])
        elif m:
            ex = [m.group(2)] + [l.strip() for l in p[1:]]
            sec["EXAMPLES"] += [".PP", ".RS 4", ".nf"]
            sec["EXAMPLES"] += [line_ok(esc(e, code=True)) for e in ex]
            sec["EXAMPLES"] += [".fi", ".RE"]
        else:
            sec["NOTES" if seen_opts else "DESCRIPTION"] += prose(p)
    return sec


def quote(s):
    return '"' + s.replace('"', "'") + '"'


def read_in(path):
    """A hand-written .in: (text before the first .SH, [(title, lines)])."""
    pre, secs, notes = [], [], "NOTES"
    if not path:
        return pre, secs, notes
    for l in open(path, encoding="utf-8").read().rstrip("\n").split("\n"):
        m = re.match(r'\.\\" mkman-notes: (.*)', l)
        if m:
            notes = m.group(1).strip()
            continue
        if l.startswith('.\\"'):
            continue
        m = re.match(r"\.SH +(.*)", l)
        if m:
            secs.append((m.group(1).strip().strip('"'), []))
        elif secs:
            secs[-1][1].append(l)
        else:
            pre.append(l)
    return pre, secs, notes


def assemble(name, section, version, sec, src_note, in_path):
    pre, extra, notes = read_in(in_path)
    if notes != "NOTES":
        sec[notes] = sec.pop("NOTES")
    order = [s if s != "NOTES" else notes for s in ORDER]
    order[-1:-1] = [k for k in sec if k not in order]  # MODULES, ...
    sec["DESCRIPTION"] += [l for l in pre if l.strip()]
    for title, body in extra:
        if title not in sec:
            sec[title] = []
            order.insert(order.index("SEE ALSO"), title)
        sec[title] += [l for l in body if l.strip()]
    manual = "ferry manual" if section == "1" else "libferry manual"
    out = ['.\\" Generated by tools/mkman.py from %s; do not edit.' % src_note,
           '.TH %s %s "" "ferry %s" "%s"' % (
               esc(name.upper(), code=True), section, version, manual)]
    for title in order:
        body = sec.get(title) or []
        if not body:
            continue
        out.append(".SH " + quote(title))
        while body and body[0] == ".PP":
            body = body[1:]
        out += body
    return "\n".join(out) + "\n"


def run_help(exe, args):
    """What `exe args` prints: a command's --help made at run time (ferry's
    from its option table, apps/ferry/opts_table.c)."""
    r = subprocess.run([exe] + shlex.split(args), capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout:
        sys.exit("mkman: %s %s: exit %d: %s" % (exe, args, r.returncode,
                                                r.stderr.strip()))
    return r.stdout


def cmd_help(a):
    if a.exe:
        text = run_help(a.exe, a.args)
        src_note = "`%s %s`" % (a.prog.split()[0], a.args)
    elif a.src and a.var:
        text = c_string(a.src, a.var)
        src_note = "%s in %s" % (a.var, os.path.relpath(a.src, a.root))
    else:
        sys.exit("mkman: help wants --exe and --args, or --src and --var")
    sec = parse_help(text, a.prog)
    summary = a.summary
    if a.summary_from:
        word = a.prog.split()[-1]
        summary = command_summaries(a.summary_from).get(word)
        if not summary:
            sys.exit("mkman: %s is not in help_main's Commands" % word)
    sec["NAME"] = ["%s \\- %s" % (esc(a.name, code=True), esc(summary))]
    page = assemble(a.name, "1", a.version, sec, src_note, a.in_file)
    write(a.output, page)


# ---- headers ----

FUNC = re.compile(r"\b(ferry_(?!_)[a-z0-9_]*)\s*\(")


def strip_comments(code):
    return re.sub(r"/\*.*?\*/", " ", code, flags=re.S)


def header_functions(path):
    """Names of the functions a public header declares, in order."""
    code = strip_comments(open(path, encoding="utf-8").read())
    code = re.sub(r"^\s*#.*?(?<!\\)$", " ", code, flags=re.M | re.S)
    names = []
    for m in FUNC.finditer(code):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def comment_text(lines):
    """The text of a /* ... */ comment, one entry per line, keeping the
    indentation inside it (tables, bullets)."""
    out = []
    for l in lines:
        t = re.sub(r"\s*\*+/$", "", l.rstrip())
        m = re.match(r"\s*/\*+ ?(.*)$", t) or re.match(r"\s*\* ?(.*)$", t)
        out.append(m.group(1) if m else t.strip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def untab(lines):
    """Declarations as written (tabs of 8), with what is inside braces
    moved 4 columns left, which keeps its alignment, and the backslashes
    of a macro aligned one column after its longest line."""
    out, depth, macro = [], 0, False
    for l in lines:
        l = l.rstrip().expandtabs(8)
        if (depth > 0 or macro) and l.startswith("        "):
            l = l[4:]
        macro = l.endswith("\\")
        code = re.sub(r'/\*.*?(\*/|$)|"(\\.|[^"])*"', "", l)
        depth += code.count("{") - code.count("}")
        out.append(l)
    cont = [i for i, l in enumerate(out) if l.endswith("\\")]
    if cont:
        col = max(len(out[i][:-1].rstrip()) for i in cont) + 1
        for i in cont:
            out[i] = out[i][:-1].rstrip().ljust(col) + "\\"
    return out


def code_lines(lines, rs):
    return [".PP", ".RS %d" % rs, ".nf"] + \
        [line_ok(esc(l, code=True)) for l in untab(lines)] + [".fi", ".RE"]


def wrap_proto(proto, width=72):
    """A prototype on lines of at most width columns, broken after commas
    and aligned after its opening parenthesis."""
    if len(proto) <= width:
        return [proto]
    open_at = proto.index("(") + 1
    pad = open_at if open_at < width // 2 else 8
    lines, cur = [], ""
    for part in re.split(r"(?<=,) ", proto):
        if cur and len(cur) + 1 + len(part) > width:
            lines.append(cur)
            cur = " " * pad + part
        else:
            cur = cur + " " + part if cur else part
    return lines + [cur]


def header_summary(path):
    """What a header is about: its first comment's first sentence (the
    words before its colon when it is long), lower-cased."""
    src = open(path, encoding="utf-8").read()
    m = re.match(r"\s*/\*(.*?)\*/", src, flags=re.S)
    first = " ".join(comment_text(m.group(0).split("\n"))).strip() if m else ""
    summary = re.split(r"(?<=[a-z)])[.?] |[.?]$", first, maxsplit=1)[0]
    if len(summary) > 72:
        summary = summary.split(": ", 1)[0]
    if not summary[1:2].isupper():
        summary = summary[:1].lower() + summary[1:]
    return summary


def cmd_overview(a):
    """libferry(3): the hand-written overview and a list of the module
    pages, one per public header."""
    sec = {k: [] for k in ORDER}
    sec["NAME"] = ["libferry \\- " + esc(a.summary)]
    syn = [".nf"]
    for h in a.headers:
        syn.append("\\fB#include <ferry/%s>\\fR" % os.path.basename(h))
    syn += ["", "\\fBcc\\fR \\fIprog.c\\fR "
            "\\fB$(pkg\\-config \\-\\-cflags \\-\\-libs libferry)\\fR", ".fi"]
    sec["SYNOPSIS"] = syn
    mods = ["Each public header has a page, and each of its functions a "
            "name that leads there (\\fBman ferry_bench\\fR):"]
    see = []
    for h in a.headers:
        page = "libferry-" + os.path.splitext(os.path.basename(h))[0]
        mods += [".TP", "\\fB%s\\fR(3)" % esc(page, code=True),
                 "<ferry/%s>: %s" % (os.path.basename(h),
                                     esc(header_summary(h)))]
        see.append("\\fB%s\\fR(3)" % esc(page, code=True))
    sec["MODULES"] = mods
    sec["SEE ALSO"] = [",\n".join(see + ["\\fBferry\\fR(1)"])]
    page = assemble(a.name, "3", a.version, sec, "include/ferry/*.h",
                    a.in_file)
    write(a.output, page)


def cmd_header(a):
    src = open(a.header, encoding="utf-8").read().rstrip("\n").split("\n")
    rel = os.path.relpath(a.header, a.root)
    inc = "ferry/" + os.path.basename(a.header)
    # the file's leading comment, then blocks split by blank lines
    i = 0
    top = []
    if src[0].lstrip().startswith("/*"):
        while True:
            top.append(src[i])
            i += 1
            if "*/" in src[i - 1]:
                break
    blocks, cur = [], []
    for l in src[i:]:
        if re.match(r"\s*#\s*(ifndef|endif|include)\b", l) or \
                re.match(r"\s*#\s*define\s+FERRY_\w+_H\s*$", l):
            l = ""
        if l.strip():
            cur.append(l)
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)

    text = comment_text(top)
    summary = header_summary(a.header)
    funcs = header_functions(a.header)
    sec = {k: [] for k in ORDER}
    sec["NAME"] = [", ".join(esc(f, code=True) for f in funcs) +
                   " \\- " + esc(summary)]
    syn = [".nf", "\\fB#include <%s>\\fR" % inc, ""]
    code = strip_comments("\n".join(src))
    for m in re.finditer(r"^[^#\n{};]*?\b(ferry_(?!_)\w*)\s*\([^;{]*?\);",
                         code, flags=re.M | re.S):
        proto = " ".join(m.group(0).split())
        proto = re.sub(r"\( ", "(", proto)
        syn += [line_ok(esc(l, code=True)) for l in wrap_proto(proto)]
    sec["SYNOPSIS"] = syn + [".fi", ".PP", "Link with \\fB\\-lferry\\fR "
                             "(\\fBpkg\\-config \\-\\-libs libferry\\fR)."]
    sec["DESCRIPTION"] = prose(text)
    # one indent for every declaration: 4, less where a line would pass
    # column 80
    width = max([len(l) for b in blocks for l in untab(b)] + [0])
    rs = max(0, min(4, 73 - width))
    for b in blocks:
        com = []
        while b and b[0].lstrip().startswith("/*"):
            j = 0
            while "*/" not in b[j]:
                j += 1
            com += comment_text(b[:j + 1])
            b = b[j + 1:]
        if com and re.match(r"-{3,} (.*?) -{3,}", com[0]):
            title = re.match(r"-{3,} (.*?) -{3,}", com[0]).group(1)
            sec["DESCRIPTION"] += [".SS " + quote(title)]
            com = com[1:]
        if b:
            sec["DESCRIPTION"] += code_lines(b, rs)
        if com:
            p = prose(com)
            if b and p and p[0] == ".PP":
                p = p[1:]
                sec["DESCRIPTION"].append(".RS 4")
                sec["DESCRIPTION"] += p + [".RE"]
            else:
                sec["DESCRIPTION"] += p
    sec["SEE ALSO"] = ["\\fBlibferry\\fR(3)"]
    page = assemble(a.name, "3", a.version, sec, rel, a.in_file)
    write(a.output, page)


# ---- names and links ----

def page_names(path):
    """Names on a page's NAME line."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for k, l in enumerate(lines):
        if re.match(r'\.SH +"?NAME"?$', l):
            name = lines[k + 1].split("\\-", 1)[0]
            return [n.strip().replace("\\-", "-").replace("\\e", "\\")
                    for n in name.replace("\\-", "-").split(",") if n.strip()]
    return []


def cmd_names(a):
    for p in a.pages:
        for n in page_names(p):
            print(n)


def cmd_links(a):
    d = os.environ.get("MESON_INSTALL_DESTDIR_PREFIX")
    man3 = a.man3dir
    if d and not os.path.isabs(man3):
        man3 = os.path.join(d, man3)
    elif d:
        prefix = os.environ.get("MESON_INSTALL_PREFIX", "")
        dest = d[:len(d) - len(prefix)] if prefix and d.endswith(prefix) \
            else ""
        man3 = dest + man3
    for page in sorted(os.listdir(man3)):
        if not (page.startswith("libferry-") and page.endswith(".3")):
            continue
        for n in page_names(os.path.join(man3, page)):
            with open(os.path.join(man3, n + ".3"), "w") as f:
                f.write(".so man3/%s\n" % page)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("help")
    h.add_argument("--exe")
    h.add_argument("--args", default="--help")
    h.add_argument("--src")
    h.add_argument("--var")
    for p in (h,):
        p.add_argument("--name", required=True)
        p.add_argument("--prog", required=True)
        p.add_argument("--summary")
        p.add_argument("--summary-from")
    hd = sub.add_parser("header")
    hd.add_argument("--header", required=True)
    hd.add_argument("--name", required=True)
    for p in (h, hd):
        p.add_argument("--in", dest="in_file")
        p.add_argument("--version", required=True)
        p.add_argument("--root", default=".")
        p.add_argument("-o", "--output", required=True)
    ov = sub.add_parser("overview")
    ov.add_argument("--name", required=True)
    ov.add_argument("--summary", required=True)
    ov.add_argument("--in", dest="in_file")
    ov.add_argument("--version", required=True)
    ov.add_argument("-o", "--output", required=True)
    ov.add_argument("headers", nargs="+")
    n = sub.add_parser("names")
    n.add_argument("pages", nargs="+")
    ln = sub.add_parser("links")
    ln.add_argument("man3dir")
    a = ap.parse_args()
    {"help": cmd_help, "header": cmd_header,
     "overview": cmd_overview,
     "names": cmd_names, "links": cmd_links}[a.cmd](a)


if __name__ == "__main__":
    main()
