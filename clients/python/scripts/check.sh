#!/usr/bin/env bash
# Checks the Python client: a venv from the lock (reused while the lock is unchanged), the package
# installed editable, ruff (lint and format), mypy --strict, then pytest against a real nats-server
# and registry process.
#
# Env: NATS_SERVER_BIN (default: nats-server on PATH), AGENT_REGISTRY_BIN (default: the repo's
# dist/cli/main.js, so run `npm run build` first), JUNIT_XML (pytest writes a JUnit report there),
# PYTHON (default python3). Extra arguments go to pytest.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"

step() {
  local name="$1"
  shift
  local start end
  start=$EPOCHREALTIME
  echo "==> $name"
  if "$@"; then
    end=$EPOCHREALTIME
    echo "==> $name: ok in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
  else
    local rc=$?
    end=$EPOCHREALTIME
    echo "==> $name: FAILED (exit $rc) after $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
    exit "$rc"
  fi
}

venv=""
make_venv() {
  venv="$(bash "$here/scripts/venv.sh")"
}

cd "$here"
step "venv, and agent-registry installed editable (scripts/venv.sh)" make_venv
step "ruff check" "$venv/bin/ruff" check .
step "ruff format --check" "$venv/bin/ruff" format --check .
step "mypy --strict" "$venv/bin/mypy" --strict

export AGENT_REGISTRY_BIN="${AGENT_REGISTRY_BIN:-$repo/dist/cli/main.js}"
if [ ! -f "$AGENT_REGISTRY_BIN" ]; then
  echo "no registry at $AGENT_REGISTRY_BIN: run \`npm run build\` in $repo first" >&2
  exit 1
fi
export NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(command -v nats-server || true)}"
if [ -z "$NATS_SERVER_BIN" ]; then
  echo "no nats-server: set NATS_SERVER_BIN" >&2
  exit 1
fi
echo "nats-server: $NATS_SERVER_BIN ($("$NATS_SERVER_BIN" --version 2>&1 | head -1))"
echo "registry: $AGENT_REGISTRY_BIN"

pytest_args=(-q -p no:cacheprovider)
if [ -n "${JUNIT_XML:-}" ]; then
  pytest_args+=("--junitxml=$JUNIT_XML")
fi
step "pytest" "$venv/bin/pytest" "${pytest_args[@]}" "$@"
