#!/usr/bin/env bash
# Prints the path of the Python client's virtualenv, after making it when it is missing: one per
# version of the lock (requirements-dev.txt), under the cache, with the package installed
# editable. Used by check.sh and by the benchmarks (bench/scenarios/clients.ts). Progress goes
# to stderr; stdout is the path alone.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
lock="$here/requirements-dev.txt"
sha="$(sha256sum "$lock" | cut -c1-16)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/agent-registry/py-venv-$sha"

if [ -x "$venv/bin/python" ] && [ -f "$venv/.complete" ]; then
  echo "reusing $venv" >&2
else
  echo "making $venv from $lock" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$lock" >&2
  touch "$venv/.complete"
fi
# No build isolation: hatchling and editables come from the lock, nothing else is fetched.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$here" >&2
echo "$venv"
