#!/usr/bin/env python3
"""The build's own tools (from a new user's trial of the AF_XDP path):

- `meson setup` ends with a summary that says whether the AF_XDP fast path is built (and why not), and it
  agrees with what this gslbd does with a `[server] xdp` config.
- tools/build passes a job count to ninja (-jN, -j N or $GSLBD_BUILD_JOBS; none: ninja's own default) and
  configures an existing build directory only once. Run against a stub ninja on PATH: nothing is built.
- tools/build --server compiles each library as unity units; no unit holds two file-local definitions of one
  name (a redefinition there, though each file compiles alone). Read from meson's introspection: nothing is built.
- tools/install-deps installs only what is missing, the test tools only with --test, with daemon starts
  forbidden during the install, and never runs systemctl. Run against stub dpkg-query, apt-get and systemctl.
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO, gslbd_path, run_tests  # noqa: E402

BUILD = os.environ.get("GSLBD_BUILD_ROOT") or os.path.dirname(os.path.dirname(gslbd_path()))


class BuildTest(unittest.TestCase):
    def test_summary_says_whether_xdp_is_built(self):
        with open(os.path.join(BUILD, "meson-logs", "meson-log.txt"), errors="replace") as f:
            log = f.read()
        line = next((l.strip() for l in log.splitlines() if l.strip().startswith("AF_XDP fast path")), None)
        self.assertIsNotNone(line, "meson setup printed no summary line for the AF_XDP fast path")
        value = line.split(":", 1)[1].strip()
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "g.toml")
            with open(cfg, "w") as f:
                f.write('[server]\nlisten = ["127.0.0.1:10053"]\nxdp = ["eth0"]\n')
            p = subprocess.run([gslbd_path(), "--check", "-c", cfg], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=20)
        built = "built without the AF_XDP" not in p.stdout
        self.assertEqual(value.startswith("yes"), built, (line, p.stdout))
        if not built:
            self.assertRegex(value, r"^no \((-Dxdp=disabled|missing .+)")
        for part in ("libFuzzer targets", "GeoIP (libmaxminddb)", "systemd notify (libsystemd)"):
            self.assertIn(part, log)

    def run_build(self, *args, env=None):
        with tempfile.TemporaryDirectory() as d:
            stub = os.path.join(d, "ninja")
            record = os.path.join(d, "args")
            with open(stub, "w") as f:
                f.write(f'#!/bin/sh\necho "$@" > {record}\n')
            os.chmod(stub, stat.S_IRWXU)
            meson = os.path.join(d, "meson")
            with open(meson, "w") as f:
                f.write(f'#!/bin/sh\necho meson "$@" >> {record}.meson\n')
            os.chmod(meson, stat.S_IRWXU)
            bdir = os.path.join(d, "b")
            os.mkdir(bdir)
            open(os.path.join(bdir, "build.ninja"), "w").close()  # configured: no meson setup
            e = {k: v for k, v in os.environ.items() if k != "GSLBD_BUILD_JOBS"}
            e["PATH"] = d + os.pathsep + e["PATH"]
            e.update(env or {})
            p = subprocess.run(["bash", os.path.join(REPO, "tools", "build"), *[a.replace("DIR", bdir) for a in args]],
                               env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
            ran = open(record).read().split() if os.path.exists(record) else None
            self.meson_ran = (open(record + ".meson").read().replace(bdir, "DIR").splitlines()
                              if os.path.exists(record + ".meson") else [])
            return p.returncode, p.stdout, [a.replace(bdir, "DIR") for a in ran] if ran is not None else None

    def test_tools_build_jobs(self):
        self.assertEqual(self.run_build("DIR")[::2], (0, ["-C", "DIR"]))
        self.assertEqual(self.run_build("-j3", "DIR")[::2], (0, ["-C", "DIR", "-j", "3"]))
        self.assertEqual(self.run_build("DIR", "-j", "2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.run_build("DIR", env={"GSLBD_BUILD_JOBS": "1"})[::2], (0, ["-C", "DIR", "-j", "1"]))
        self.assertEqual(self.run_build("DIR", "-j4", env={"GSLBD_BUILD_JOBS": "1"})[::2],
                         (0, ["-C", "DIR", "-j", "4"]))  # the command line wins
        rc, out, ran = self.run_build("DIR", "-jx")
        self.assertEqual((rc, ran), (2, None), out)
        self.assertIn("positive number of jobs", out)
        rc, out, ran = self.run_build("--help")
        self.assertEqual((rc, ran), (0, None), out)
        self.assertIn("GSLBD_BUILD_JOBS", out)

    def test_tools_build_options(self):
        # Options for a directory already configured are applied to it (README's two commands share build/, in
        # either order); none: meson is not run at all.
        self.assertEqual(self.run_build("DIR", "-j2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.meson_ran, [])
        self.assertEqual(self.run_build("DIR", "-Dtests=false", "-j2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.meson_ran, ["meson configure DIR -Dtests=false"])
        # README's two commands: --server and --tests, before or after DIR.
        self.assertEqual(self.run_build("--server", "DIR")[::2], (0, ["-C", "DIR"]))
        self.assertEqual(self.meson_ran, ["meson configure DIR -Dtests=false -Dunity=on -Dbuildtype=release"])
        self.assertEqual(self.run_build("DIR", "--tests", "-j2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.meson_ran,
                         ["meson configure DIR -Dtests=true -Dunity=off -Dbuildtype=debugoptimized"])


# File-local definitions at column 0 (the style of the tree: clang-format, no indented namespaces): functions
# (name and parameter types), constants and types. A member (Class::name) is no file-local definition.
UNITY_FUNC = re.compile(r"^(?!(?:return|else|if|for|while|switch|case|namespace|using|template)\b)"
                        r"[A-Za-z_][\w:<>,*& ]*?[\s*&](\w+)\(([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*)\)\s*"
                        r"(?:const\s*)?(?:noexcept\s*)?\{", re.M)
UNITY_CONST = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:constexpr|const)\s+[\w:<>,\s*&]+?\b(\w+)\s*[={[]", re.M)
UNITY_TYPE = re.compile(r"^(?:struct|class|enum(?:\s+class)?|union)\s+(\w+)\s*(?:final\s*)?[:{]", re.M)


def parameter_types(params):
    out = []
    for p in re.sub(r"\s+", " ", params).split(","):
        p = p.split("=")[0].strip()
        if p:
            out.append(re.sub(r"(?<=[\w*&>])\s*\b\w+$", "", p) if re.search(r"[\w*&>][\s*&]+\w+$", p) else p)
    return ",".join(x.replace(" ", "") for x in out)


UNITY_NAMESPACE = re.compile(r"^namespace ([\w:]+) \{|^\}\s*// namespace ([\w:]+)", re.M)


def file_local_definitions(text):
    """{'num(double)': line, 'const kBatch': line, 'type Addr': line} of a C++ source, each name prefixed with the
    named namespaces around it ('gslb::server::num(double)'): the same helper in two namespaces is no clash."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    scopes = [(m.start(), m.group(1), m.group(2)) for m in UNITY_NAMESPACE.finditer(text)]  # before // goes
    text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)  # the same offsets

    def scope(pos):
        stack = []
        for at, opened, closed in scopes:
            if at > pos:
                break
            if opened:
                stack.append(opened)
            elif stack and stack[-1] == closed:
                stack.pop()
        return "::".join(stack) + "::" if stack else ""

    defs = {}
    for m in UNITY_FUNC.finditer(text):
        if text[m.start(1) - 2:m.start(1)] != "::" and m.group(1) != "main":
            defs.setdefault(f"{scope(m.start())}{m.group(1)}({parameter_types(m.group(2))})",
                            text.count("\n", 0, m.start()) + 1)
    for rx, kind in ((UNITY_CONST, "const"), (UNITY_TYPE, "type")):
        for m in rx.finditer(text):
            defs.setdefault(f"{kind} {scope(m.start())}{m.group(1)}", text.count("\n", 0, m.start()) + 1)
    return defs


class UnityUnits(unittest.TestCase):
    """README's first command builds with tools/build --server, a unity build: meson compiles each library's C++
    files unity_size (4) to a unit, in the order the meson.build lists them. Two files of one unit that each define
    the same helper in their anonymous namespace are a redefinition there, though each compiles alone — as the
    tests' build and CI compile them. The split of server/ by plane put server/control/api_status.cpp and
    server/control/explain.cpp, each with its own num(double) and age(int64_t, int64_t), into one unit, and README's
    first command stopped at a compile error. The units are rebuilt from meson's introspection of this build, for
    the targets --server builds (those of tests/ are compiled one file at a time)."""

    def units(self):
        opts = {o["name"]: o["value"] for o in json.loads(subprocess.run(
            ["meson", "introspect", BUILD, "--buildoptions"], stdout=subprocess.PIPE, text=True, timeout=60,
            check=True).stdout)}
        size = int(opts.get("unity_size", 4))
        targets = json.loads(subprocess.run(["meson", "introspect", BUILD, "--targets"], stdout=subprocess.PIPE,
                                            text=True, timeout=60, check=True).stdout)
        tests = os.path.join(os.path.realpath(REPO), "tests") + os.sep
        for t in targets:
            if os.path.realpath(t["defined_in"]).startswith(tests):
                continue
            for ts in t["target_sources"]:
                if ts.get("language") != "cpp":
                    continue
                srcs = [s for s in ts["sources"] if s.endswith(".cpp") and
                        os.path.realpath(s).startswith(os.path.realpath(REPO) + os.sep)]
                for i in range(0, len(srcs), size):
                    yield t["name"], srcs[i:i + size]

    def test_no_unit_defines_a_name_twice(self):
        problems = []
        seen_units = 0
        for target, unit in self.units():
            seen_units += 1
            first = {}
            for src in unit:
                with open(src, encoding="utf-8", errors="replace") as f:
                    for name, line in file_local_definitions(f.read()).items():
                        where = f"{os.path.relpath(src, REPO)}:{line}"
                        if name in first:
                            problems.append(f"{target}: {name} in {first[name]} and {where}")
                        else:
                            first[name] = where
        self.maxDiff = None
        self.assertGreater(seen_units, 20)  # the introspection found the libraries
        self.assertEqual(problems, [], "definitions a unity build (tools/build --server) would see twice")

    def test_the_scan_sees_the_definitions_that_collided(self):
        status = ("namespace {\n\nnlohmann::json num(double v) {\n    return {};\n}\n"
                  "nlohmann::json age(int64_t atMs, int64_t now) {\n    return {};\n}\n"
                  "const char* requestError(evhttp_request_error e) {\n    return \"\";\n}\n"
                  "constexpr int kBatch = Worker::kUdpBatch;  // datagrams\nstruct Addr {\n};\n}  // namespace\n"
                  "ApiResponse ControlApi::status(const Snapshot& s) {\n}\n")
        self.assertEqual(set(file_local_definitions("namespace gslb::server {\n" + status)),
                         {"gslb::server::num(double)", "gslb::server::age(int64_t,int64_t)",
                          "gslb::server::requestError(evhttp_request_error)", "const gslb::server::kBatch",
                          "type gslb::server::Addr"})
        # A helper of the same name in another namespace of the unit is no clash.
        self.assertEqual(set(file_local_definitions("namespace a {\nvoid put16(uint8_t* p) {\n}\n}  // namespace a\n"
                                                    "namespace b {\nvoid put16(uint8_t* p) {\n}\n")),
                         {"a::put16(uint8_t*)", "b::put16(uint8_t*)"})
        self.assertEqual(set(file_local_definitions("json num(double x) {\n")), {"num(double)"})
        self.assertEqual(set(file_local_definitions("int fail(const std::string& msg) {\n")),
                         {"fail(conststd::string&)"})


class Layering(unittest.TestCase):
    """server/layering.py, which the build runs: the tree as it is passes (the build's own rules, read from the
    meson files), and an include that goes up a plane, or out of a folder's allowed list, fails with file:line
    and why."""

    SCRIPT = os.path.join(REPO, "server", "layering.py")

    def rules(self, path, name):
        text = open(os.path.join(REPO, path)).read()
        block = re.search(name + r" = \[(.*?)\n\]", text, re.S).group(1)
        return block

    def run_script(self, *args):
        return subprocess.run([sys.executable, self.SCRIPT, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)

    def test_the_tree_passes_its_own_rules(self):
        planes = re.findall(r"\['(\w+)', \[([^\]]*)\]\]", self.rules("server/meson.build", "planes"))
        args = [f"{p}=" + ",".join(x.strip(" '") for x in lower.split(",") if x.strip()) for p, lower in planes]
        self.assertEqual(len(args), 9)
        r = self.run_script(os.path.join(REPO, "server"), "--stamp", os.devnull, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        folders = re.findall(r"'([^']+=[^']*)'", self.rules("meson.build", "folder_rules"))
        self.assertIn("zones=", folders)
        r = self.run_script("--folders", REPO, "--stamp", os.devnull, *folders)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_an_include_up_a_plane_or_out_of_a_folder_fails(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "server", "base"))
            os.makedirs(os.path.join(d, "server", "conf"))
            os.makedirs(os.path.join(d, "zones"))
            with open(os.path.join(d, "server", "conf", "a.cpp"), "w") as f:
                f.write('#include "server/base/log.hpp"\n')
            with open(os.path.join(d, "server", "base", "b.cpp"), "w") as f:
                f.write('// the clock\n#include "server/conf/config.hpp"\n')
            with open(os.path.join(d, "zones", "c.cpp"), "w") as f:
                f.write('#include "zones/answer.hpp"\n#include <fmt/format.h>\n\n#include "server/base/log.hpp"\n')
            r = self.run_script(os.path.join(d, "server"), "--stamp", os.devnull, "base=", "conf=base")
            self.assertEqual(r.returncode, 1)
            self.assertIn("server/base/b.cpp:2: plane base includes server/conf/ (a higher plane", r.stderr)
            self.assertNotIn("a.cpp", r.stderr)
            r = self.run_script("--folders", d, "--stamp", os.devnull, "zones=")
            self.assertEqual(r.returncode, 1)
            self.assertIn("zones/c.cpp:4: zones includes server/base/log.hpp", r.stderr)
            r = self.run_script("--folders", d, "--stamp", os.devnull, "zones=server/base")
            self.assertEqual(r.returncode, 0, r.stderr)


def long_functions(paths, limit, cwd=REPO):
    """[(lines, name, file:line)] of the C++ functions under `paths` longer than `limit` lines, by universal-ctags's
    extent of each definition (lambdas, which ctags names __anon…, count in the function around them)."""
    p = subprocess.run(["ctags", "-R", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "-x",
                        "--_xformat=%{end} %{line} %N %F", *paths], cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    out = []
    for line in p.stdout.splitlines():
        end, start, name, path = line.split(" ", 3)
        if end.isdigit() and not name.startswith("__anon") and int(end) - int(start) + 1 > limit:
            out.append((int(end) - int(start) + 1, name, f"{path}:{start}"))
    return sorted(out, reverse=True)


@unittest.skipUnless(shutil.which("ctags"), "universal-ctags is not installed (tools/install-deps --test)")
class FunctionLength(unittest.TestCase):
    """No function of gslbd, its libraries, gslbctl or the agent is over 120 lines: a longer one is split into
    named steps, each named for its job (doc/design.md "Principles"), as Zone::compile, loadConfig and the
    others were."""

    LIMIT = 120

    def test_no_function_is_over_the_limit(self):
        found = long_functions(["server", "zones", "metrics", "tools/gslbctl", "tools/agent"], self.LIMIT)
        self.assertEqual(found, [], "split these into named steps")

    def test_the_scan_sees_a_long_function(self):
        with tempfile.TemporaryDirectory() as d:
            body = "".join(f"    x += {i};\n" for i in range(125))
            with open(os.path.join(d, "a.cpp"), "w") as f:
                f.write("namespace n {\nint shortOne() { return 1; }\n"
                        "int longOne(int x) {\n" + body + "    auto l = [] { return 2; };\n    return x;\n}\n}\n")
            self.assertEqual(long_functions(["."], self.LIMIT, cwd=d), [(129, "longOne", "a.cpp:3")])


class InstallDeps(unittest.TestCase):
    """tools/install-deps with stub dpkg-query, apt-get, systemctl and sudo: what it would install, and that it
    never stops, starts or reconfigures a service (it stopped nsd, knot, unbound, nginx … at every run)."""

    def run_deps(self, *args, missing=(), policy_exists=False):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log")
            policy = os.path.join(d, "policy-rc.d")
            if policy_exists:
                with open(policy, "w") as f:
                    f.write("#!/bin/sh\nexit 0\n")
                os.chmod(policy, 0o755)
            stubs = {
                # Installed unless named in $MISSING.
                "dpkg-query": 'for p in $MISSING; do [ "$p" = "${@: -1}" ] && exit 1; done; '
                              'printf "install ok installed"',
                # Records its arguments, and during an install whether policy-rc.d forbids starts.
                "apt-get": f'echo "apt-get $*" >> {log}; case "$*" in *install*) '
                           f'if [ -x {policy} ]; then {policy}; echo "policy-rc.d exit $?" >> {log}; '
                           f'else echo "no policy-rc.d" >> {log}; fi;; esac',
                "systemctl": f'echo "systemctl $*" >> {log}',
                "sudo": '"$@"',
            }
            for name, body in stubs.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(f"#!/bin/bash\n{body}\n")
                os.chmod(os.path.join(d, name), stat.S_IRWXU)
            env = dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"], MISSING=" ".join(missing),
                       GSLBD_POLICY_RC_D=policy)
            p = subprocess.run(["bash", os.path.join(REPO, "tools", "install-deps"), *args], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            ran = open(log).read().splitlines() if os.path.exists(log) else []
            policy_after = open(policy).read() if os.path.exists(policy) else None
            return p, ran, policy_after

    def test_nothing_missing_runs_nothing(self):
        p, ran, policy = self.run_deps()
        self.assertEqual((p.returncode, ran, policy), (0, [], None), p.stdout)
        p, ran, policy = self.run_deps("--test")
        self.assertEqual((p.returncode, ran, policy), (0, [], None), p.stdout)

    def test_installs_only_what_is_missing_with_starts_forbidden(self):
        p, ran, policy = self.run_deps(missing=("libldns-dev", "nsd"))
        self.assertEqual(p.returncode, 0, p.stdout)
        # nsd is a test tool: the default (server) mode does not install it.
        self.assertEqual(ran, ["apt-get update -qq", "apt-get install -y -qq --no-install-recommends libldns-dev",
                               "policy-rc.d exit 101"])
        self.assertIsNone(policy)  # its own policy-rc.d is gone afterwards
        p, ran, policy = self.run_deps("--test", missing=("nsd", "knot"))
        self.assertEqual(ran[1:], ["apt-get install -y -qq --no-install-recommends nsd knot",
                                   "policy-rc.d exit 101"])
        self.assertFalse([r for r in ran if r.startswith("systemctl")], ran)

    def test_an_existing_policy_rc_d_is_left_alone(self):
        p, ran, policy = self.run_deps(missing=("meson",), policy_exists=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("policy-rc.d exit 0", ran)  # the machine's own governs the install
        self.assertEqual(policy, "#!/bin/sh\nexit 0\n")

    def test_modes_list_their_packages(self):
        server = subprocess.run(["bash", os.path.join(REPO, "tools", "install-deps"), "--list"],
                                stdout=subprocess.PIPE, text=True, check=True).stdout.split()
        test = subprocess.run(["bash", os.path.join(REPO, "tools", "install-deps"), "--test", "--list"],
                              stdout=subprocess.PIPE, text=True, check=True).stdout.split()
        self.assertIn("libldns-dev", server)
        for tool in ("nsd", "knot", "unbound", "haproxy", "chromium", "clang", "doctest-dev"):
            self.assertNotIn(tool, server)
            self.assertIn(tool, test)
        for tool in ("pandoc", "debhelper", "lintian"):
            self.assertIn(tool, test)
        self.assertEqual(set(server) - set(test), set())


if __name__ == "__main__":
    run_tests()
