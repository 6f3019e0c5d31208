#!/usr/bin/env bash
# Checks the Go client: gofmt, go vet, staticcheck (pinned, installed into the cache on first use),
# then the tests with the race detector against a real nats-server and registry process.
#   NATS_SERVER_BIN     the nats-server binary the tests start (default: the cached v2.15.2)
#   AGENT_REGISTRY_BIN  the registry entry point (default: <repo>/dist/cli/main.js; run npm run build)
#   GO_TEST_JSON        when set, go test's -json output is also written to this file
set -euo pipefail

STATICCHECK_VERSION=v0.8.2
cd "$(dirname "$0")/.."
module_dir=$(pwd)
repo_root=$(cd ../.. && pwd)

export AGENT_REGISTRY_BIN="${AGENT_REGISTRY_BIN:-$repo_root/dist/cli/main.js}"
if [[ -z "${NATS_SERVER_BIN:-}" && -x "$HOME/.cache/agent-registry/nats-server-v2.15.2/nats-server" ]]; then
  export NATS_SERVER_BIN="$HOME/.cache/agent-registry/nats-server-v2.15.2/nats-server"
fi
if [[ ! -f "$AGENT_REGISTRY_BIN" ]]; then
  echo "check.sh: $AGENT_REGISTRY_BIN does not exist: run npm run build in $repo_root, or set AGENT_REGISTRY_BIN" >&2
  exit 1
fi
echo "check.sh: nats-server $("${NATS_SERVER_BIN:-nats-server}" --version 2>&1 | head -1), registry $AGENT_REGISTRY_BIN"

step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  if "$@"; then
    echo "== $name: ok in $((SECONDS - start)) s"
  else
    local rc=$?
    echo "== $name: FAILED (exit $rc) after $((SECONDS - start)) s" >&2
    exit "$rc"
  fi
}

staticcheck_dir="${XDG_CACHE_HOME:-$HOME/.cache}/agent-registry/staticcheck-$STATICCHECK_VERSION"
install_staticcheck() {
  if [[ -x "$staticcheck_dir/staticcheck" ]]; then
    return 0
  fi
  GOBIN="$staticcheck_dir" go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
}

run_tests() {
  if [[ -n "${GO_TEST_JSON:-}" ]]; then
    # -json keeps the verdict in the file; pipefail carries go test's exit status.
    go test -race -count=1 -json ./... | tee "$GO_TEST_JSON" | go run ./internal/testsummary
  else
    go test -race -count=1 ./...
  fi
}

check_gofmt() {
  local unformatted
  unformatted=$(gofmt -l .)
  if [[ -n "$unformatted" ]]; then
    echo "not gofmt-formatted (run gofmt -w):" >&2
    echo "$unformatted" >&2
    return 1
  fi
}

step "gofmt" check_gofmt
step "go vet" go vet ./...
step "install staticcheck $STATICCHECK_VERSION" install_staticcheck
step "staticcheck" "$staticcheck_dir/staticcheck" ./...
step "go test -race" run_tests
echo "check.sh: all steps passed in $SECONDS s ($module_dir)"
