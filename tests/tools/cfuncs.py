#!/usr/bin/env python3
"""cfuncs.py: the largest C functions and those with the most parameters.

usage: tests/tools/cfuncs.py [-n N] [DIR|FILE ...]   (default: lib bin)

Reads the project's style: a definition's name starts its line, its
parameters follow in parentheses (on one line or more), and its body
opens with "{" and closes with "}", each alone at the start of a line.
Lines counts the body from "{" to "}".  Parameters counts the top-level
commas of the list, "void" and "..." not counted.
"""
import os
import re
import sys

NAME = re.compile(r'^([A-Za-z_]\w*)\s*\(')


def params(text):
    """The number of parameters in a list without its parentheses."""
    depth, count, seen = 0, 0, ''
    for ch in text:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        elif ch == ',' and depth == 0:
            count += seen.strip() not in ('', '...')
            seen = ''
            continue
        seen += ch
    count += seen.strip() not in ('', 'void', '...')
    return count


def functions(path):
    """(name, first line, lines, parameters) of each definition in path."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    i = 0
    while i < len(lines):
        m = NAME.match(lines[i])
        if not m:
            i += 1
            continue
        head, j = lines[i][m.end():], i
        while head.count('(') + 1 > head.count(')') and j + 1 < len(lines):
            j += 1
            head += ' ' + lines[j].strip()
        close = depth = 0
        for k, ch in enumerate(head):
            depth += ch == '('
            if ch == ')':
                if depth == 0:
                    close = k
                    break
                depth -= 1
        if j + 1 >= len(lines) or lines[j + 1] != '{':
            i = j + 1
            continue
        end = j + 1
        while end < len(lines) and lines[end] != '}':
            end += 1
        yield m.group(1), i + 1, end - j, params(head[:close])
        i = end + 1


def sources(args):
    for a in args:
        if os.path.isfile(a):
            yield a
            continue
        for root, _, files in sorted(os.walk(a)):
            for name in sorted(files):
                if name.endswith('.c'):
                    yield os.path.join(root, name)


def main(argv):
    n = 15
    if len(argv) > 1 and argv[0] == '-n':
        n, argv = int(argv[1]), argv[2:]
    found = [(path, *fn) for path in sources(argv or ['lib', 'bin']) for fn in functions(path)]
    if not found:
        sys.exit('cfuncs.py: no C function found')
    print('%d functions; over 50 lines: %d; over 6 parameters: %d' % (len(found),
          sum(f[3] > 50 for f in found), sum(f[4] > 6 for f in found)))
    print('\nlargest (lines):')
    for path, name, line, size, np in sorted(found, key=lambda f: (-f[3], f[1]))[:n]:
        print('%5d  %s:%d %s' % (size, path, line, name))
    print('\nmost parameters:')
    for path, name, line, size, np in sorted(found, key=lambda f: (-f[4], f[1]))[:n]:
        print('%5d  %s:%d %s' % (np, path, line, name))


if __name__ == '__main__':
    main(sys.argv[1:])
