#!/usr/bin/env python3
"""The planes of server/ (server/meson.build's `planes`) as a build step: every #include "server/PLANE/…" of
every file under server/ must name the file's own plane or one its plane may use; a file outside every plane
fails too. Run by the build (server/meson.build), or by hand:

    python3 server/layering.py server --stamp /dev/null base= conf=base state=base,conf …

--folders checks the folders around server/ the same way (doc/design.md "Layout"; the top-level meson.build
lists them): every #include of the project's own ("server/…", "zones/…", "metrics/…", "tools/…") in a file under
FOLDER must start with FOLDER or one of the prefixes it may use:

    python3 server/layering.py --folders . --stamp /dev/null zones= metrics= tools/gslbctl=zones,server/conf …

--list prints the files it reads (meson's depend_files, so the check runs again when one changes); with
--folders, `--list ROOT FOLDER…`."""
import os
import re
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"server/([^"/]+)/[^"]*"', re.M)
SUFFIXES = ('.cpp', '.hpp', '.h', '.c')


def sources(root):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(SUFFIXES):
                yield os.path.join(d, n)


def verdict(problems, stamp):
    """Prints the problems (file:line: why) and returns 1, or writes the stamp the build waits for and returns 0."""
    if problems:
        print('\n'.join(problems), file=sys.stderr)
        return 1
    with open(stamp, 'w') as f:
        f.write('ok\n')
    return 0


OWN = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"((?:server|zones|metrics|tools)/[^"]*)"', re.M)


def folders(argv):
    """--folders ROOT --stamp OUT FOLDER=PREFIX,… …  or  --folders --list ROOT FOLDER…"""
    if argv[0] == '--list':
        root = argv[1]
        print('\n'.join(p for f in argv[2:] for p in sources(os.path.join(root, f))))
        return 0
    root, stamp = argv[0], argv[2]
    problems = []
    for spec in argv[3:]:
        folder, _, allowed = spec.partition('=')
        prefixes = [folder + '/'] + [a.rstrip('/') + ('' if a.endswith(('.hpp', '.h')) else '/')
                                     for a in allowed.split(',') if a]
        for path in sources(os.path.join(root, folder)):
            with open(path, encoding='utf-8') as f:
                text = f.read()
            for m in OWN.finditer(text):
                target = m.group(1)
                if any(target == p or target.startswith(p) for p in prefixes):
                    continue
                line = text.count('\n', 0, m.start()) + 1
                problems.append(f'{os.path.relpath(path, root)}:{line}: {folder} includes {target} ({folder} may '
                                f'use: {", ".join(p.rstrip("/") for p in prefixes[1:]) or "nothing of the project"})')
    return verdict(problems, stamp)


def main(argv):
    if argv[1] == '--folders':
        return folders(argv[2:])
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
    return verdict(problems, stamp)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
