#!/usr/bin/env python3
"""The manual (README.md, doc/) held to the code, so that what an operator reads is what the binaries do:

- Reference: every config key the loader declares (each TableReader get*/raw/has/forEachTable call with a literal
  key in server/, the declarative schema of server/conf/schema.hpp) is in gslbd.toml(5); every gslbctl command and
  option (its own --help, walked) in gslbctl(8); every gslbd option in gslbd(8).
- Commands: every gslbctl / gslbd command line in the docs' code blocks and inline code names a command and
  options that exist; tools/install-deps and tools/build options, meson -D options and `meson test` names too.
- Configs: every TOML block parses and, merged into a small whole config (zone and files made to fit), passes
  `gslbd --check`; the config of getting-started.md's walk-through passes `gslbctl check` after its commands.
- README's five-minute walk-through runs as written (on free ports, in a temporary directory) and answers as it
  says it will.
- The man pages this build made render with man(1) and hold every key.
"""
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import REPO, free_port, gslbctl_path, gslbd_path, run_tests  # noqa: E402

BUILD = os.path.abspath(os.environ.get("GSLBD_BUILD_ROOT") or os.path.join(os.path.dirname(gslbd_path()), ".."))
MAN = os.path.join(REPO, "doc", "man")


def doc_files():
    return [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "doc", "**", "*.md"),
                                                                recursive=True))


def rel(path):
    return os.path.relpath(path, REPO)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)


def code_blocks(path):
    """(language, body, first line) of each fenced block; a man page's indented EXAMPLES blocks as 'sh'."""
    text = read(path)
    for m in FENCE.finditer(text):
        yield m.group(1), m.group(2), line_of(text, m.start()) + 1
    for m in re.finditer(r"(?:^\n)((?:^    \S[^\n]*\n)+)", text, re.M):
        if not text[: m.start()].count("```") % 2:  # not inside a fence
            yield "sh", re.sub(r"^    ", "", m.group(1), flags=re.M), line_of(text, m.start(1))


def inline_code(path):
    """(code, line) of each inline code span outside fenced blocks."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), read(path))
    for m in re.finditer(r"(?<!`)`([^`\n]+)`(?!`)", text):
        yield m.group(1), line_of(text, m.start())


# ----------------------------------------------------------------------------------------------- the binaries


def cli_help(argv):
    p = subprocess.run(argv + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    assert p.returncode == 0, (argv, p.stdout)
    return p.stdout


def help_options(text):
    """The option names of a CLI11 --help: '-c', '--config', …"""
    opts = set()
    for m in re.finditer(r"^  (-[^\s]+)", text, re.M):
        for o in m.group(1).split(","):
            opts.add(o)
    return opts


def help_subcommands(text):
    sub = text.split("\nSubcommands:\n", 1)
    if len(sub) < 2:
        return []
    return re.findall(r"^  ([a-z][a-z0-9-]*)\s", sub[1], re.M)


_TREE = None


def gslbctl_tree():
    """{('zone', 'init'): {options}, …, (): {top options}} from gslbctl's own --help, walked."""
    global _TREE
    if _TREE is None:
        tree = {}

        def walk(path):
            text = cli_help([gslbctl_path(), *path])
            tree[path] = help_options(text)
            for s in help_subcommands(text):
                walk(path + (s,))

        walk(())
        _TREE = tree
    return _TREE


def gslbd_options():
    return help_options(cli_help([gslbd_path()]))


# ----------------------------------------------------------------------------------------- the config schema

READER_CALL = re.compile(
    r"\b\w+\s*\.\s*(getInt|getNumber|getString|getBool|getStrings|getTable|raw|has|forEachTable)\(\s*\"([^\"]+)\"")


def loader_keys():
    """Every key the config loader declares: {key: 'file:line' of its first declaration}. The loader is
    server/conf/schema.hpp's TableReader; its users are the files that name it."""
    keys = {}
    for path in sorted(glob.glob(os.path.join(REPO, "server", "**", "*.[ch]pp"), recursive=True)):
        text = read(path)
        if "TableReader" not in text:
            continue
        for m in READER_CALL.finditer(text):
            keys.setdefault(m.group(2), f"{rel(path)}:{line_of(text, m.start())}")
    return keys


def documented(key, text, code):
    """The key is in the man page source: as `key`, in a `a`, `b` cell, or as `key = ` in code."""
    k = re.escape(key)
    return bool(re.search(rf"`{k}`", text) or re.search(rf"(?<![\w.-]){k}\s*=", code) or
                re.search(rf"^#+ .*`\[+{k}[.\]]", text, re.M))


# ------------------------------------------------------------------------------------------- shell commands

SPLIT = re.compile(r"&&|\|\||[;|&()]|\$\(")


def commands(snippet):
    """The simple commands of a shell snippet: lists of words (comments, heredoc bodies and brackets of
    synopses dropped); unparseable pieces are skipped."""
    out = []
    lines = snippet.replace("\\\n", " ").split("\n")
    heredoc = None
    for line in lines:
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*'?\"?(\w+)", line)
        if m:
            heredoc = m.group(1)
            line = line[: m.start()]
        line = re.sub(r"(^|\s)#.*$", "", line)
        line = re.sub(r"\s\$\s", " ", line)  # "$ gslbctl …" in a transcript
        for piece in SPLIT.split(line):
            try:
                words = shlex.split(piece)
            except ValueError:
                words = piece.split()
            words = [w.strip("[]") for w in words if w.strip("[]")]
            if words and words[0] == "$":
                words = words[1:]
            if words:
                out.append(words)
    return out


# The repository's own tools a doc may tell the reader to run.
TOOLS = ("tools/install-deps", "tools/build", "tools/lab", "tools/fuzz", "tools/bench")


def tool_options(tool):
    """The --options a tools/ script's own --help names (tools/lab, tools/fuzz, tools/bench)."""
    p = subprocess.run([os.path.join(REPO, tool), "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    assert p.returncode == 0, (tool, p.stdout)
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", p.stdout))


def program(words):
    """(name, argv from the program on) for a gslbctl / gslbd / tools/… / meson command, else None."""
    for i, w in enumerate(words):
        base = os.path.basename(w)
        if base in ("gslbctl", "gslbd"):
            return base, words[i:]
        if w in TOOLS or w.endswith(tuple("/" + t for t in TOOLS)):
            return "tools/" + base, words[i:]
        if base == "meson" and i == 0:
            return "meson", words[i:]
        if base not in ("sudo", "bash", "env", "exec", "ip", "netns", "time", "timeout") and not re.match(
                r"^[A-Z_]+=", w) and not (i > 0 and words[i - 1] == "exec"):
            return None
    return None


def option_names(word):
    """'--config=F' -> ['--config']; '-c/--config' -> both; others -> []."""
    if not word.startswith("-") or word in ("-", "--"):
        return []
    names = []
    for part in word.split("/"):
        part = part.split("=", 1)[0].rstrip("…,.:")
        if re.fullmatch(r"--?[A-Za-z][\w-]*", part):
            names.append(part)
    return names


# -------------------------------------------------------------------------------------------- TOML snippets


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def toml_dump(d, prefix=()):
    """A TOML text of d: plain keys first, then tables, arrays of tables as [[…]]."""
    out = []
    scalars = {k: v for k, v in d.items() if not isinstance(v, dict) and
               not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))}
    name = ".".join(json.dumps(p) for p in prefix)
    if prefix and (scalars or not d):
        out.append(f"[{name}]")
    for k, v in scalars.items():
        out.append(f"{json.dumps(k)} = {toml_value(v)}")
    for k, v in d.items():
        if k in scalars:
            continue
        if isinstance(v, dict):
            out.append(toml_dump(v, prefix + (k,)))
        else:
            for item in v:
                out.append(f"[[{'.'.join(json.dumps(p) for p in prefix + (k,))}]]")
                out += [f"{json.dumps(k2)} = {toml_value(v2)}" for k2, v2 in item.items()]  # tables inline
    return "\n".join(x for x in out if x) + "\n"


def merge(base, extra):
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base


BASE = """
[server]
listen = ["127.0.0.1:5300"]
[[zone]]
name = "gslb.example.com."
file = "gslb.example.com.zone"
[site.east]
[site.west]
[hostname."www.gslb.example.com."]
[[hostname."www.gslb.example.com.".service]]
address = "192.0.2.10"
site = "east"
[[hostname."www.gslb.example.com.".service]]
address = "198.51.100.10"
site = "west"
"""

# Files a snippet may name, made to fit: (key, content).
FILE_KEYS = {"token_file": "0123456789abcdef0123\n", "agent_token_file": "0123456789abcdef4567\n", "secret_file": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n",
             "cookie_secret_file": "0123456789abcdef0123456789abcdef\n", "nets_file": "# none\n"}
# Keys whose files cannot be made here (a MaxMind database, a CA, DNSSEC keys): dropped from the merged config,
# the rest of the snippet still checked.
UNMADE_KEYS = {"geoip", "ca_file", "key_dir", "dnssec"}


def fit_files(conf, d):
    """Writes what the config names: token and secret files, and each zone with an SOA, NS and the A/AAAA of
    every service of its hostnames."""
    def walk(node):
        if isinstance(node, dict):
            for k in list(node):
                v = node[k]
                if k in UNMADE_KEYS:
                    del node[k]
                elif k in FILE_KEYS and isinstance(v, str):
                    with open(os.path.join(d, v), "w") as f:
                        f.write(FILE_KEYS[k])
                    os.chmod(os.path.join(d, v), 0o600)
                else:
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)
    walk(conf)
    for z in conf.get("zone", []):
        name = z["name"]
        lines = [f"$ORIGIN {name}", "$TTL 30", "@ IN SOA ns1 hostmaster 1 3600 600 604800 60",
                 "@ IN NS ns1", "ns1 IN A 127.0.0.1", "@ IN NS ns2.example.net."]
        for host, h in conf.get("hostname", {}).items():
            if host.endswith("." + name) or host == name:
                for s in h.get("service", []):
                    lines.append(f"{host} IN {'AAAA' if ':' in s['address'] else 'A'} {s['address']}")
        with open(os.path.join(d, z["file"]), "w") as f:
            f.write("\n".join(lines) + "\n")


def gslbd_check(conf_text, d):
    path = os.path.join(d, "gslbd.toml")
    with open(path, "w") as f:
        f.write(conf_text)
    return subprocess.run([gslbd_path(), "--check", "--config", path], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)


# ------------------------------------------------------------------------------------------------- the tests


class Reference(unittest.TestCase):
    def test_every_config_key_is_in_gslbd_toml_5(self):
        keys = loader_keys()
        # The loader's key count, as a floor: a scan that finds nothing (the files moved, the reader renamed)
        # must not pass for complete documentation.
        self.assertGreater(len(keys), 100, keys)
        text = read(os.path.join(MAN, "gslbd.toml.5.md"))
        code = "\n".join(b for _, b, _ in code_blocks(os.path.join(MAN, "gslbd.toml.5.md")))
        code += "\n".join(c for c, _ in inline_code(os.path.join(MAN, "gslbd.toml.5.md")))
        missing = [f"{where}: `{k}`" for k, where in sorted(keys.items(), key=lambda kv: kv[1])
                   if not documented(k, text, code)]
        self.assertEqual(missing, [], "config keys the loader accepts that doc/man/gslbd.toml.5.md lacks")

    def test_readme_is_a_front_page(self):
        """README.md is what gslbd is, the two set-up commands, a first GSLB hostname and links, in at most 200
        lines (it was a 1,692-line specification); the manual it links to is in doc/, each document there."""
        text = read(os.path.join(REPO, "README.md"))
        self.assertLessEqual(text.count("\n"), 200, "README.md: more than 200 lines; the detail goes to doc/")
        setup = text.split("## Set up", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
        self.assertRegex(setup, r"(?m)^bash tools/install-deps && bash tools/build --server && .*gslbd --config ")
        self.assertRegex(setup, r"(?m)^bash tools/install-deps --test && bash tools/build --tests && meson test ")
        self.assertIn("## A first GSLB hostname in five minutes", text)
        linked = set(re.findall(r"\]\((doc/[\w/.-]+\.md)\)", text))
        for doc in ("getting-started", "operating", "dnssec", "ns-set", "xdp", "migration", "api", "performance",
                    "testing", "design", "man/gslbd.toml.5", "man/gslbd.8", "man/gslbctl.8"):
            self.assertIn(f"doc/{doc}.md", linked, "README.md links to no doc/" + doc + ".md")
        for doc in linked:
            self.assertTrue(os.path.exists(os.path.join(REPO, doc)), doc)

    def test_restart_only_keys_are_in_every_list_of_them(self):
        """Each key a reload logs as taking effect at the next restart (server/conf/restart_only.cpp's diff
        calls) is named where the manual lists those keys: gslbd(8) SIGHUP, gslbd.toml(5)'s description and
        operating.md's upgrade. tls_listen was missing from all three: an operator who added it and reloaded saw
        "ok" and no DNS over TLS."""
        src = read(os.path.join(REPO, "server", "conf", "restart_only.cpp"))
        keys = set(re.findall(r'diff\("\[\w+\] (\w+)"', src))
        self.assertGreaterEqual(len(keys), 8, keys)  # a scan that finds nothing must not pass
        self.assertIn("tls_listen", keys)
        for doc in ("man/gslbd.8.md", "man/gslbd.toml.5.md", "operating.md"):
            # The paragraph that lists them: the one naming `[rrl] table_size` and the restart.
            paras = [p for p in re.split(r"\n\s*\n", read(os.path.join(REPO, "doc", doc)))
                     if "`[rrl] table_size`" in p and "restart" in p]
            self.assertEqual(len(paras), 1, f"doc/{doc}: no single paragraph lists the restart-only keys")
            missing = sorted(k for k in keys if f"`{k}`" not in paras[0] and f"] {k}`" not in paras[0])
            self.assertEqual(missing, [], f"doc/{doc}: restart-only keys its list lacks")

    def test_documented_checker_is_not_blind(self):
        # A key named only in passing prose does not count; a table row, a `key` span or `key = ` in code do.
        self.assertFalse(documented("wieght", "the wieght of it", ""))
        self.assertTrue(documented("weight", "| `weight` | ≥ 0 |", ""))
        self.assertTrue(documented("scale", "", "x = { scale = 2 }"))

    def test_every_gslbctl_command_and_option_is_in_gslbctl_8(self):
        tree = gslbctl_tree()
        self.assertIn(("dnssec", "rollover"), tree)
        text = read(os.path.join(MAN, "gslbctl.8.md")).replace("\\-", "-")
        missing = []
        for path, opts in sorted(tree.items()):
            if path and not re.search(rf"(\*\*|gslbctl ){re.escape(' '.join(path))}\b", text):
                missing.append("command: " + " ".join(path))
            for o in sorted(opts - {"-h", "--help", "--version"}):
                if o.startswith("--") and not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text):
                    missing.append(f"option: gslbctl {' '.join(path)} {o}")
        self.assertEqual(missing, [], "gslbctl commands and options that doc/man/gslbctl.8.md lacks")

    def test_every_gslbd_option_is_in_gslbd_8(self):
        text = read(os.path.join(MAN, "gslbd.8.md")).replace("\\-", "-")
        missing = [o for o in sorted(gslbd_options() - {"-h"}) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
        self.assertEqual(missing, [])

    def test_every_gslbd_agent_option_is_in_gslbd_agent_8(self):
        agent = os.environ.get("GSLBD_AGENT") or os.path.join(BUILD, "tools", "gslbd-agent")
        opts = help_options(cli_help([agent]))
        self.assertIn("--once", opts)
        text = read(os.path.join(MAN, "gslbd-agent.8.md")).replace("\\-", "-")
        missing = [o for o in sorted(opts - {"-h"}) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
        self.assertEqual(missing, [], "gslbd-agent options that doc/man/gslbd-agent.8.md lacks")

    def test_gslbd_synopsis_does_not_make_config_optional(self):
        # gslbd takes the file only as -c/--config FILE (a bare FILE is a usage error); the synopsis had
        # "[-c|--config] FILE", which reads as "gslbd FILE" works.
        p = subprocess.run([gslbd_path(), "--check", os.path.join(REPO, "examples", "gslbd.toml")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stdout)
        synopsis = read(os.path.join(MAN, "gslbd.8.md")).split("# SYNOPSIS", 1)[1].split("\n# ", 1)[0]
        self.assertNotIn("\\[**-c**", synopsis)
        self.assertIn("{**-c**|**\\--config**} *FILE*", synopsis)

    def test_help_points_to_the_man_pages(self):
        self.assertIn("gslbd.toml(5)", cli_help([gslbd_path()]))
        self.assertIn("gslbd(8)", cli_help([gslbd_path()]))
        self.assertIn("gslbctl(8)", cli_help([gslbctl_path()]))

    def test_man_pages_render(self):
        pages = {p: os.path.join(BUILD, "doc", p) for p in ("gslbd.8", "gslbd.toml.5", "gslbctl.8", "gslbd-agent.8")}
        if not all(os.path.exists(p) for p in pages.values()):
            self.skipTest("this build made no man pages (-Dman: pandoc is not installed)")
        for page, path in pages.items():
            p = subprocess.run(["man", "-l", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=60, env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0",
                                                    MANPAGER="cat", PAGER="cat"))
            self.assertEqual(p.returncode, 0, p.stderr)
            plain = re.sub(r".\x08", "", p.stdout)  # man's overstrike bold and underline
            self.assertIn("NAME", plain)
            self.assertNotIn("\\-", plain)  # pandoc escaped, groff rendered
            if page == "gslbd.toml.5":
                for k in ("listen", "token_file", "health_quorum", "flashback_floor", "nearest_tolerance"):
                    self.assertIn(k, plain)


class Commands(unittest.TestCase):
    def invocations(self):
        """(where, program, argv) of every command line in the docs' code blocks and inline code."""
        for path in doc_files():
            snippets = [(b, line) for lang, b, line in code_blocks(path) if lang in ("sh", "", "console")]
            snippets += [(c, line) for c, line in inline_code(path)
                         if re.match(r"(sudo )?(gslbctl|gslbd|tools/|bash tools/|meson )", c)]
            for snippet, line in snippets:
                for words in commands(snippet):
                    found = program(words)
                    if found:
                        yield f"{rel(path)}:{line}", found[0], found[1]

    def test_gslbctl_and_gslbd_command_lines_exist(self):
        tree = gslbctl_tree()
        gslbd_opts = gslbd_options()
        errors = []
        seen = 0
        for where, prog, argv in self.invocations():
            if prog == "gslbd":
                seen += 1
                for w in argv[1:]:
                    for o in option_names(w):
                        if o not in gslbd_opts:
                            errors.append(f"{where}: gslbd has no option {o}: {' '.join(argv)}")
            elif prog == "gslbctl":
                seen += 1
                path = ()
                words = argv[1:]
                # The command words: `drain|enable` in a synopsis is two commands.
                while words and not words[0].startswith("-"):
                    alts = words[0].split("|")
                    nxt = [path + (a,) for a in alts if path + (a,) in tree]
                    if len(nxt) != len(alts):
                        if not path or any(path + (a,) in tree for a in alts):
                            errors.append(f"{where}: gslbctl has no command '{' '.join(path + (words[0],))}'")
                        break
                    path = nxt[0]
                    words = words[1:]
                    if len(nxt) > 1:
                        break
                if path == () and words and not words[0].startswith("-"):
                    continue  # already reported
                allowed = tree.get(path, set()) | tree[()]
                for w in words:
                    for o in option_names(w):
                        if o not in allowed:
                            errors.append(f"{where}: gslbctl {' '.join(path)} has no option {o}")
        self.assertGreater(seen, 40)  # the scan found the manual's commands
        self.assertEqual(errors, [])

    def test_tools_and_meson_command_lines_exist(self):
        install_opts = {"--test", "--list", "--help", "-h"}
        project_opts = set(re.findall(r"option\('([\w-]+)'", read(os.path.join(REPO, "meson_options.txt"))))
        builtin = {"buildtype", "prefix", "b_sanitize", "b_lundef", "b_ndebug", "b_lto", "b_coverage",
                   "warning_level", "werror", "cpp_std", "unity", "optimization", "debug", "libdir", "mandir"}
        tests = json.loads(subprocess.run(["meson", "introspect", BUILD, "--tests"], stdout=subprocess.PIPE,
                                          text=True, timeout=60, check=True).stdout)
        names = {t["name"] for t in tests} | {s for t in tests for s in t["suite"]} | \
                {s.split(":", 1)[-1] for t in tests for s in t["suite"]}
        errors = []
        helped, seen_tools = {}, set()
        for where, prog, argv in self.invocations():
            if prog == "tools/install-deps":
                errors += [f"{where}: tools/install-deps has no option {w}" for w in argv[1:]
                           if w.startswith("-") and w not in install_opts]
            if prog == "tools/build":
                errors += [f"{where}: tools/build has no option {w}" for w in argv[1:]
                           if w.startswith("--") and w not in ("--server", "--tests", "--help")]
            if prog in ("tools/lab", "tools/fuzz", "tools/bench"):
                if prog not in helped:
                    helped[prog] = tool_options(prog)
                errors += [f"{where}: {prog} has no option {o}: {' '.join(argv)}" for w in argv[1:]
                           for o in option_names(w) if o.startswith("--") and o not in helped[prog]]
                seen_tools.add(prog)
            if prog in ("tools/build", "meson"):
                for w in argv[1:]:
                    m = re.match(r"-D([\w-]+)=", w)
                    if m and m.group(1) not in project_opts | builtin:
                        errors.append(f"{where}: no meson option {m.group(1)}")
            if prog == "meson" and len(argv) > 1 and argv[1] == "test":
                rest = argv[2:]
                i = 0
                while i < len(rest):
                    w = rest[i]
                    if w in ("-C", "--suite", "--no-suite", "--repeat", "--num-processes", "-t"):
                        if w in ("--suite", "--no-suite") and i + 1 < len(rest) and rest[i + 1] not in names:
                            errors.append(f"{where}: meson test: no suite {rest[i + 1]}")
                        i += 2
                        continue
                    if not w.startswith("-") and w not in names and "…" not in w and w.upper() != w:
                        errors.append(f"{where}: meson test: no test or suite named {w}")
                    i += 1
        # The scan found the lab, fuzzing and benchmark commands of doc/lab.md, doc/testing.md, doc/performance.md.
        self.assertEqual(seen_tools, {"tools/lab", "tools/fuzz", "tools/bench"})
        self.assertEqual(errors, [])

    def test_the_scan_catches_a_wrong_command(self):
        self.assertEqual(program(["tools/lab", "--polcy", "x"]), ("tools/lab", ["tools/lab", "--polcy", "x"]))
        self.assertIn("--policy", tool_options("tools/lab"))
        self.assertNotIn("--polcy", tool_options("tools/lab"))
        tree = gslbctl_tree()
        words = commands("gslbctl zone frobnicate FILE  # comment\nsudo gslbd --chek -c x")
        self.assertEqual(words, [["gslbctl", "zone", "frobnicate", "FILE"], ["sudo", "gslbd", "--chek", "-c", "x"]])
        self.assertNotIn(("zone", "frobnicate"), tree)
        self.assertNotIn("--chek", gslbd_options())


class Configs(unittest.TestCase):
    def test_every_toml_block_passes_gslbd_check(self):
        checked = 0
        errors = []
        for path in doc_files():
            for lang, body, line in code_blocks(path):
                if lang != "toml":
                    continue
                where = f"{rel(path)}:{line}"
                try:
                    snippet = tomllib.loads(body)
                except tomllib.TOMLDecodeError as e:
                    errors.append(f"{where}: not TOML: {e}")
                    continue
                whole = "server" in snippet and "zone" in snippet
                conf = snippet if whole else merge(tomllib.loads(BASE), snippet)
                # A hostname the snippet adds needs its zone's records; sites its services name, their tables.
                for h in conf.get("hostname", {}).values():
                    for s in h.get("service", []):
                        conf.setdefault("site", {}).setdefault(s.get("site", "east"), {})
                # A [cluster] needs [control]; and this machine is none of the documented members: `self` says
                # which it stands for, as the manual says to where a member cannot find itself.
                if "cluster" in conf:
                    first = conf["cluster"]["members"][0]
                    conf.setdefault("control", {"listen": first.split("//", 1)[1], "token_file": "control.token"})
                    conf["cluster"].setdefault("self", first)
                with tempfile.TemporaryDirectory() as d:
                    fit_files(conf, d)
                    p = gslbd_check(toml_dump(conf), d)
                    checked += 1
                    if p.returncode != 0:
                        errors.append(f"{where}: gslbd --check refused it:\n{p.stdout}\n{toml_dump(conf)}")
        self.assertGreater(checked, 5)
        self.assertEqual(errors, [])

    def test_the_packaged_example_checks(self):
        """/etc/gslbd/ of the Debian package (dist/gslbd.toml and its zone) passes `gslbd --check` as shipped."""
        with tempfile.TemporaryDirectory() as d:
            for f in ("gslbd.toml", "gslb.example.com.zone"):
                with open(os.path.join(d, f), "w") as out:
                    out.write(read(os.path.join(REPO, "dist", f)))
            p = gslbd_check(read(os.path.join(d, "gslbd.toml")), d)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("ok: 1 zone(s)", p.stdout)
        self.assertIn("1 GSLB hostname(s)", p.stdout)

    def test_a_wrong_key_in_a_snippet_fails(self):
        conf = merge(tomllib.loads(BASE), tomllib.loads('[check.web]\ntype = "http"\nwieght = 3\n'))
        with tempfile.TemporaryDirectory() as d:
            fit_files(conf, d)
            p = gslbd_check(toml_dump(conf), d)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn('unknown key "wieght"', p.stdout)


# What a reader of the repository cannot open: the founding notes and style notes kept outside it, the seed texts
# by file, and issue numbers of a tracker that is not in it.
OUTSIDE = re.compile(r"\b(DESIGN|STYLE)\.md\b|\bseeds?[ /_]?0\d\d\b|/seed[s]/|\b[Ii]ssues? #?\d+\b")
# A path of the repository: a top-level folder, then a file name with an extension (".in" kept).
REPO_PATH = re.compile(r"(?<![\w/.-])((?:server|zones|metrics|tools|tests|doc|dist|debian|examples)/[\w./-]*\w"
                       r"\.(?:hpp|cpp|h|c|py|md|toml|service|conf|db|txt|sh|json|html|js|css)(?:\.in)?)\b")
# Named though absent, on purpose: a placeholder, examples a test writes, a path from before server/ was split.
KNOWN_ABSENT = {
    ("tests/docs/test_docs.py", "doc/FILE.md"),
    ("tests/e2e/test_build.py", "server/base/b.cpp"),
    ("tests/e2e/test_build.py", "zones/c.cpp"),
    ("tools/bench", "server/worker.cpp"),
}
DOC_SECTION = re.compile(r"(doc/[\w/.-]+\.md|README(?:\.md)?)(?:'s)? \"([^\"]+)\"")


def tracked_text_files():
    files = run_git(["ls-files"])
    for f in files:
        if f.startswith("tests/fuzz/corpus/") or not os.path.isfile(os.path.join(REPO, f)):
            continue
        try:
            yield f, read(os.path.join(REPO, f))
        except UnicodeDecodeError:
            continue


def run_git(args):
    p = subprocess.run(["git", "-C", REPO, *args], stdout=subprocess.PIPE, text=True, timeout=60)
    return [l for l in p.stdout.split("\n") if l]


def headings(path):
    return [re.sub(r"[`*]", "", h).strip().lower()
            for h in re.findall(r"^#+ (.*)$", read(path), re.M)] + \
           [re.sub(r"[`*]", "", h).strip().lower() for h in re.findall(r"^(?:- )?\*\*([^*]+?)[.:]?\*\*", read(path), re.M)]


class Citations(unittest.TestCase):
    def test_nothing_cites_what_the_repository_lacks(self):
        """No file cites the founding design or style notes kept outside the repository, a seed file or an issue
        number: a comment cites doc/design.md's section, an RFC section, a vendor manual by title and page, or a
        file here."""
        if not os.path.isdir(os.path.join(REPO, ".git")) and not run_git(["rev-parse", "--git-dir"]):
            self.skipTest("not a git checkout")
        bad = []
        for f, text in tracked_text_files():
            for m in OUTSIDE.finditer(text):
                bad.append(f"{f}:{line_of(text, m.start())}: {text[max(0, m.start() - 30):m.end() + 30]!r}")
        self.assertGreater(len(list(tracked_text_files())), 300)
        self.assertEqual(bad, [], f"{len(bad)} citations of documents outside the repository")

    def test_cited_sections_exist(self):
        """A citation of a section (doc/FILE.md or README, then the section's title in double quotes) names a
        heading, or a bold paragraph title, of that file."""
        bad = []
        for f, text in tracked_text_files():
            for m in DOC_SECTION.finditer(text):
                target, section = m.group(1), m.group(2)
                path = os.path.join(REPO, "README.md" if target.startswith("README") else target)
                where = f"{f}:{line_of(text, m.start())}"
                if not os.path.exists(path):
                    bad.append(f"{where}: {target} does not exist")
                    continue
                want = re.sub(r"\s*\n\s*(?:///|//|#)?\s*", " ", re.sub(r"[`*]", "", section)).strip().lower()
                if not any(h == want or h.startswith(want) for h in headings(path)):
                    bad.append(f"{where}: {target} has no section \"{section}\"")
        self.assertEqual(bad, [])

    def test_cited_files_exist(self):
        """A path of the repository named in a comment or a document (server/…, zones/…, doc/…) exists: files
        move (server/ was split by plane), and a comment that points to where a file was sends a reader nowhere.
        #include lines are the compiler's to check (some name generated headers); KNOWN are named on purpose."""
        bad = []
        for f, text in tracked_text_files():
            for m in REPO_PATH.finditer(text):
                path = m.group(1)
                line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end())]
                known = (f, path) in KNOWN_ABSENT or (f == "tests/docs/test_docs.py" and
                                                      any(path == k for _, k in KNOWN_ABSENT))
                if "#include" in line or known or os.path.exists(os.path.join(REPO, path)):
                    continue
                bad.append(f"{f}:{line_of(text, m.start())}: {path} does not exist")
        self.assertEqual(bad, [])
        self.assertTrue(REPO_PATH.search("(see dist/gslbd.service.in)"))
        self.assertEqual(REPO_PATH.search("see server/state/gslb.hpp.").group(1), "server/state/gslb.hpp")

    def test_the_patterns_match(self):
        for s in ("(DESIGN" + ".md \"Data model\")", "STYLE" + ".md 7", "see " + "se" + "ed 002", "issue" + " 16",
                  "(issues" + " 12)", "/work/shared/" + "seeds/002_x.txt"):
            self.assertTrue(OUTSIDE.search(s), s)
        for s in ("doc/design.md \"Data model\"", "RFC 9110 §15.5.6", "tissue 3", "an issue"):
            self.assertFalse(OUTSIDE.search(s), s)


def walkthrough(path, heading):
    text = read(path)
    part = text.split(heading, 1)[1]
    return re.search(r"^```sh\n(.*?)^```", part, re.S | re.M).group(1)


class Walkthroughs(unittest.TestCase):
    def test_readme_five_minutes(self):
        """README's first GSLB hostname, run as written: only the directory and the two ports differ."""
        script = walkthrough(os.path.join(REPO, "README.md"), "## A first GSLB hostname in five minutes")
        self.assertIn("gslbd --config gslbd.toml &", script)
        dns, api = free_port(), free_port()
        with tempfile.TemporaryDirectory() as d:
            work = os.path.join(d, "gslb")
            s = (script.replace("/tmp/gslb", work).replace("5300", str(dns)).replace("8054", str(api))
                 .replace("export PATH=$PWD/build/server:$PWD/build/tools:$PATH",
                          f"export PATH={os.path.dirname(gslbd_path())}:{os.path.dirname(gslbctl_path())}:$PATH"))
            s = "set -e\n" + s.replace("sleep 1\n", f"for i in $(seq 50); do dig @127.0.0.1 -p {dns} +short "
                                       "+time=1 +tries=1 gslb.example.com SOA >/dev/null && break; sleep 0.2; done\n")
            p = subprocess.Popen(["bash", "-c", s], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True)
            try:
                out, _ = p.communicate(timeout=60)
            finally:
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # gslbd, when the script stopped before its kill
                except ProcessLookupError:
                    pass
        self.assertEqual(p.returncode, 0, out)
        answers = re.findall(r"^(192\.0\.2\.10|198\.51\.100\.10)$", out, re.M)
        self.assertEqual(len(answers), 2, out)  # one address per query: before and after the drain
        self.assertEqual(answers[1], "198.51.100.10", out)  # east drained
        self.assertIn("drained: east", out)
        self.assertIn("www.gslb.example.com.", out)

    def test_getting_started_config_checks(self):
        """getting-started.md's zone of one's own: its config and commands up to `gslbctl check`, in a
        temporary directory for /etc/gslbd."""
        path = os.path.join(REPO, "doc", "getting-started.md")
        text = read(path).split("## A GSLB hostname on two sites", 1)[1]
        blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)[:2]
        with tempfile.TemporaryDirectory() as d:
            script = "\n".join(blocks).replace("/etc/gslbd", os.path.join(d, "etc"))
            script = script.split("gslbctl check")[0] + "gslbctl check" + script.split("gslbctl check")[1].split(
                "\n")[0] + "\n"
            env = dict(os.environ, PATH=os.path.dirname(gslbctl_path()) + os.pathsep + os.environ["PATH"])
            p = subprocess.run(["bash", "-ec", script], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 0, script + "\n" + p.stdout)
        self.assertIn(": ok", p.stdout)


if __name__ == "__main__":
    run_tests()
