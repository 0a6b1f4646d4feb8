#!/usr/bin/env python3
"""The planes of server/ (server/meson.build's `planes`) as a build step: every #include "server/PLANE/…" of
every file under server/ must name the file's own plane or one its plane may use; a file outside every plane
fails too. Run by the build (server/meson.build), or by hand:

    python3 server/layering.py server --stamp /dev/null base= conf=base state=base,conf …

--list prints the files it reads (meson's depend_files, so the check runs again when one changes)."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"server/([^"/]+)/[^"]*"', re.M)
SUFFIXES = ('.cpp', '.hpp', '.h', '.c')


def sources(root):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(SUFFIXES):
                yield os.path.join(d, n)


def main(argv):
    root = argv[1]
    if argv[2] == '--list':
        print('\n'.join(sources(root)))
        return 0
    stamp = argv[3]
    may_use = {}
    for spec in argv[4:]:
        plane, _, lower = spec.partition('=')
        may_use[plane] = {p for p in lower.split(',') if p}
    problems = []
    for path in sources(root):
        rel = os.path.relpath(path, root)
        plane = rel.split(os.sep)[0]
        if plane not in may_use:
            problems.append(f'server/{rel}: in no plane of server/meson.build ({", ".join(may_use)})')
            continue
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            if target == plane or target in may_use[plane]:
                continue
            line = text.count('\n', 0, m.start()) + 1
            why = 'a higher plane' if target in may_use and plane in may_use[target] else 'not one it may use'
            problems.append(f'server/{rel}:{line}: plane {plane} includes server/{target}/ ({why}; '
                            f'{plane} may use: {", ".join(sorted(may_use[plane])) or "nothing"})')
    if problems:
        print('\n'.join(problems), file=sys.stderr)
        return 1
    with open(stamp, 'w') as f:
        f.write('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
