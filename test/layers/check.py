#!/usr/bin/env python3
"""check.py — the layering check of src/ (docs/layers.md).

Reads every .c and .h file of src/, finds what each subsystem uses of the
others — #include "dir/file.h" of a header in src/, and names (functions,
variables) defined in another subsystem's files — and compares that with the
layer order in layers.txt (beside this script).  A subsystem is a directory
of src/ (src/api/, src/write/, ...) or a file directly in src/ (dynindex.c).
It may use only subsystems on lower lines; subsystems on one line are peers
and may not use each other.  Exits 1 naming every offending file and name.

With --circles SUBSYSTEM (the gateway: a program and a module of its own,
a driver on top), it also checks the files of that subsystem among
themselves: a circle among them (a file using another that uses it back,
directly or through others) fails the check too, naming the names each file
uses of the next.

Usage: check.py [--src DIR] [--layers FILE] [--graph] [--circles SUBSYSTEM]...
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def strip_code(text):
    """The code of a C file without comments, string and character literals
    (each replaced by a space, newlines kept so that line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(' ' + '\n' * text.count('\n', i, j))
            i = j
        elif c == '/' and text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
            out.append(' ')
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ' + '\n' * text.count('\n', i, j))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def directives_removed(code):
    """Code without preprocessor lines (their continuations included), except
    that #define bodies are kept as code (a macro using a name uses it)."""
    lines = code.split('\n')
    out = []
    cont = False
    for ln in lines:
        s = ln.lstrip()
        if cont or s.startswith('#'):
            cont = ln.rstrip().endswith('\\')
            m = re.match(r'\s*#\s*define\s+\w+(\([^)]*\))?(.*)', ln)
            out.append(m.group(2).rstrip('\\') if m else '')
        else:
            out.append(ln)
    return '\n'.join(out)


IDENT = re.compile(r'[A-Za-z_]\w*')
KEYWORDS = set('''auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while bool'''.split())


def definitions(code, is_header):
    """Names a file defines for other files: non-static functions and
    variables at file level (in a header also static inline functions)."""
    names = []
    depth = 0
    chunk_start = 0
    body_is_function = False
    for i, c in enumerate(code):
        if c == '{':
            if depth == 0:
                head = code[chunk_start:i]
                fn = function_name(head) if '=' not in head else None
                body_is_function = fn is not None
                words = set(IDENT.findall(head))
                if fn and 'typedef' not in words and \
                        ('static' not in words or (is_header and 'inline' in words)):
                    names.append((fn, code.count('\n', 0, i) + 1))
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0 and body_is_function:
                chunk_start = i + 1     # a function body ends its definition
                body_is_function = False
        elif c == ';' and depth == 0:
            head = code[chunk_start:i]
            words = set(IDENT.findall(head))
            if words and not words & {'static', 'extern', 'typedef'}:
                var = variable_name(head)
                if var:
                    names.append((var, code.count('\n', 0, i) + 1))
            chunk_start = i + 1
    return names


def function_name(head):
    """The name of the function a declaration head (before '{') defines."""
    m = re.search(r'([A-Za-z_]\w*)\s*\([^;]*\)\s*(pg_attribute_\w+\s*(\([^)]*\))?\s*)*$', head.strip(), re.S)
    if not m or m.group(1) in KEYWORDS:
        return None
    before = head.strip()[:m.start(1)]
    if not IDENT.search(before):        # a macro call at file level
        return None
    return m.group(1)


def variable_name(head):
    """The name a file-level variable definition (before ';') defines."""
    decl = head.split('=')[0].strip()
    if '}' in decl:                     # struct S {...} v;  enum {...};
        decl = decl[decl.rindex('}') + 1:].strip()
        if not IDENT.search(decl):
            return None
        decl = 'struct ' + decl
    m = re.search(r'\(\s*\*\s*([A-Za-z_]\w*)\s*\)', decl)
    if m:
        return m.group(1)               # a function pointer: void (*hook) (args)
    if '(' in decl:
        return None                     # a prototype or a macro call
    decl = re.sub(r'\[[^\]]*\]', '', decl)
    ids = IDENT.findall(decl)
    if len(ids) < 2:
        return None                     # PG_MODULE_MAGIC and the like
    if len(ids) == 2 and ids[0] in ('struct', 'union', 'enum'):
        return None                     # struct S; (a declaration, no variable)
    if ids[-1] in KEYWORDS:
        return None
    return ids[-1]


def circles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
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


def subsystem_of(rel):
    """The subsystem of a path relative to src/."""
    parts = rel.split('/')
    return parts[0] if len(parts) > 1 else parts[0]


def read_layers(path):
    """layers.txt: a list of (line number, [subsystems]) from top to bottom."""
    layers = []
    with open(path) as f:
        for no, ln in enumerate(f, 1):
            ln = ln.split('#', 1)[0].strip()
            if ln:
                layers.append((no, ln.split()))
    return layers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--src', default=os.path.join(HERE, '..', '..', 'src'))
    ap.add_argument('--layers', default=os.path.join(HERE, 'layers.txt'))
    ap.add_argument('--graph', action='store_true', help='print the uses found, subsystem by subsystem')
    ap.add_argument('--circles', action='append', default=[], metavar='SUBSYSTEM',
                    help='also fail on circles among the files of SUBSYSTEM')
    args = ap.parse_args()
    src = os.path.normpath(args.src)

    files = {}
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for nm in sorted(names):
            if nm.endswith(('.c', '.h')):
                p = os.path.join(root, nm)
                with open(p, encoding='utf-8', errors='replace') as f:
                    files[os.path.relpath(p, src)] = f.read()

    # name -> {subsystem: defining file}
    defined = {}
    code_of = {}
    for rel, text in files.items():
        code = strip_code(text)
        code_of[rel] = code
        for name, _ in definitions(directives_removed(code), rel.endswith('.h')):
            defined.setdefault(name, {}).setdefault(subsystem_of(rel), rel)

    # uses: (from subsystem, to subsystem) -> [(file, line, what)]
    uses = {}
    file_uses = {}                      # file -> {file: {names}}, inside --circles subsystems
    file_defs = {}
    for rel in files:
        if subsystem_of(rel) in args.circles and rel.endswith('.c'):
            for name, _ in definitions(directives_removed(code_of[rel]), rel.endswith('.h')):
                file_defs.setdefault(name, set()).add(rel)
    for rel, text in files.items():
        sub = subsystem_of(rel)
        for no, ln in enumerate(text.split('\n'), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', ln)
            if m:
                inc = m.group(1)
                target = inc if os.path.exists(os.path.join(src, inc)) else \
                    os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(rel), inc)))
                if os.path.exists(os.path.join(src, target)) and subsystem_of(target) != sub:
                    uses.setdefault((sub, subsystem_of(target)), []).append((rel, no, '#include "%s"' % inc))
        code = directives_removed(code_of[rel])
        seen = set()
        for no, ln in enumerate(code.split('\n'), 1):
            for name in IDENT.findall(ln):
                for other in file_defs.get(name, ()) if sub in args.circles and rel.endswith('.c') else ():
                    if rel not in file_defs[name] and subsystem_of(other) == sub:
                        file_uses.setdefault(rel, {}).setdefault(other, set()).add(name)
                where = defined.get(name)
                if not where or sub in where or name in seen:
                    continue
                seen.add(name)
                for other, deffile in where.items():
                    uses.setdefault((sub, other), []).append((rel, no, '%s (defined in src/%s)' % (name, deffile)))

    if args.graph:
        for (a, b), lst in sorted(uses.items()):
            print('%s -> %s: %s' % (a, b, ', '.join(sorted({w.split(' ')[0] for _, _, w in lst}))))

    ncircles = 0
    for circle in circles(file_uses):
        print('src/%s/: circle among its files (%s):' % (subsystem_of(circle[0]), ', '.join(circle)))
        for a in circle:
            for b in circle:
                if b in file_uses.get(a, {}):
                    print('  src/%s -> src/%s: %s' % (a, b, ', '.join(sorted(file_uses[a][b]))))
        ncircles += 1

    layers = read_layers(args.layers)
    level = {}
    for idx, (no, subs) in enumerate(layers):
        for s in subs:
            level[s] = idx
    bad = 0
    for s in sorted({subsystem_of(r) for r in files}):
        if s not in level:
            print('src/%s: not in %s (add it to a layer)' % (s, os.path.relpath(args.layers)))
            bad += 1
    for (a, b), lst in sorted(uses.items()):
        if a not in level or b not in level or level[a] < level[b]:
            continue
        rel = 'upward' if level[a] > level[b] else 'between peers'
        for f, no, what in lst:
            print('src/%s:%d: %s uses %s, %s (%s -> %s): %s' % (f, no, a, b, rel, a, b, what))
            bad += 1
    if bad or ncircles:
        print('layers: %d use(s) against the layer order of %s, %d circle(s) among the files of %s'
              % (bad, os.path.relpath(args.layers), ncircles, ', '.join(args.circles) or 'no subsystem'))
        return 1
    print('layers: %d subsystems, %d uses between them, all downward%s'
          % (len(level), sum(len(v) for v in uses.values()),
             ''.join('; no circle among the files of %s' % c for c in args.circles)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
