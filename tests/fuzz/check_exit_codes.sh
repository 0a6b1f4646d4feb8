#!/usr/bin/env bash
# tools/fuzz's exit status, on stand-in build directories (a build.ninja and shell scripts in place of the
# targets, so this takes a second): CI fails on 3 (build failure) and 4 (a target that does not start, or a
# committed input that fails on replay) and only reports 10 (a finding of exploration). Last session the fuzz
# build failed for two CI runs and CI stayed green because both came out as 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A build directory whose targets behave as $2 says: ok (every run passes), nostart (every run fails, as a
# target that aborts at start or on its committed corpus), explore (replay passes, exploration crashes),
# broken (the build itself fails). Called again on the same directory, it adds targets.
fake() {
  local d="$tmp/$1" how=$2 t
  shift 2
  mkdir -p "$d/tests/fuzz"
  [ -f "$d/build.ninja" ] ||
    printf 'rule fail\n  command = echo "error: deliberately broken target" && false\n' >"$d/build.ninja"
  for t in "$@"; do
    if [ "$how" = broken ]; then
      printf 'build tests/fuzz/fuzz_%s: fail\n' "$t" >>"$d/build.ninja"
      continue
    fi
    printf 'build tests/fuzz/fuzz_%s: phony\n' "$t" >>"$d/build.ninja"
    case "$how" in
      ok) body='exit 0' ;;
      nostart) body='echo "ERROR: AddressSanitizer: stand-in"; exit 1' ;;
      explore) body='for a; do [ "$a" = -runs=0 ] && exit 0; done; echo "ERROR: libFuzzer: stand-in"; exit 1' ;;
    esac
    printf '#!/bin/sh\n%s\n' "$body" >"$d/tests/fuzz/fuzz_$t"
    chmod +x "$d/tests/fuzz/fuzz_$t"
  done
}

status=0
expect() {
  local want=$1 name=$2 got=0
  shift 2
  tools/fuzz --seconds 1 --parallel 2 --build-dir "$tmp/$name" "$@" >"$tmp/$name.out" 2>&1 || got=$?
  if [ "$got" = "$want" ]; then
    echo "ok: $name -> $got"
  else
    echo "FAIL: $name: tools/fuzz exited $got, want $want"
    sed 's/^/    /' "$tmp/$name.out"
    status=1
  fi
}

fake clean ok nets rtt_report
expect 0 clean nets rtt_report
fake broken broken nets
expect 3 broken nets
fake nostart nostart nets
expect 4 nostart nets
fake explore explore nets rtt_report
expect 10 explore nets rtt_report
# A deterministic failure outranks a finding in the same run.
fake mixed explore nets
fake mixed nostart rtt_report
expect 4 mixed nets rtt_report
# A target named on the command line that the build did not produce never starts.
fake missing ok nets
printf 'build tests/fuzz/fuzz_rtt_report: phony\n' >>"$tmp/missing/build.ninja"
expect 4 missing nets rtt_report
expect 2 usage --no-such-option
exit $status
