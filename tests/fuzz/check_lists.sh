#!/usr/bin/env bash
# The fuzz targets of tests/fuzz/meson.build, tools/fuzz's default list (what CI's exploration step runs) and
# doc/testing.md's fuzz table name the same targets: `exposition` once sat in meson.build only, so CI never fuzzed it.
set -euo pipefail
cd "$(dirname "$0")/../.."
meson=$(sed -n "/^fuzz_targets = {/,/^}/p" tests/fuzz/meson.build | grep -oE "^ *'[a-z_0-9]+'" | tr -d "' " | sort)
tool=$(grep -E '^all=\(' tools/fuzz | sed -E 's/^all=\((.*)\)/\1/' | tr ' ' '\n' | sort)
readme=$(sed -n '/^## Fuzzing/,/^## /p' doc/testing.md | grep -oE '^\| `[a-z_0-9]+` \|' | grep -oE '[a-z_0-9]+' | sort)
files=$(ls tests/fuzz/fuzz_*.cpp | sed -E 's|.*/fuzz_(.*)\.cpp|\1|' | sort)
status=0
for what in tool readme files; do
  if [ "${!what}" != "$meson" ]; then
    echo "fuzz targets differ between tests/fuzz/meson.build and $what:"
    diff <(echo "$meson") <(echo "${!what}") || true
    status=1
  fi
done
# Every path segment and query parameter the control API reads (server/control/api*.cpp) is in api.dict, so the
# fuzzer reaches what is behind it (`at_ms` was missing once).
for word in $(grep -hoE '(parts\[[0-9]\]|parts\.back\(\)|\bk|\bkey) == "[a-z_.0-9]+"' server/control/api*.cpp |
              grep -oE '"[a-z_.0-9]+"' | tr -d '"' | sort -u); do
  if ! grep -qF "$word" tests/fuzz/api.dict; then
    echo "tests/fuzz/api.dict lacks \"$word\", which server/control/api*.cpp reads"
    status=1
  fi
done
[ $status = 0 ] && echo "fuzz targets in step: $(echo $meson)"
exit $status
