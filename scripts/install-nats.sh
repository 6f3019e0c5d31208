#!/usr/bin/env bash
# Builds the pinned current nats-server and the `nats` CLI from the Go module proxy into a
# cache folder outside the repository, keyed by version, so a second run (or a second clone)
# reuses them. Needs only Go; no download site beyond the module proxy.
#
# Prints, on stdout, the two lines a shell or .ci/run evaluates:
#   NATS_SERVER_BIN=<path to nats-server>   what the test harness runs (test/harness/nats.ts)
#   NATS_CLI_BIN=<path to nats>             what the README test runs
# Progress goes to stderr. Usage: eval "$(scripts/install-nats.sh)"
set -euo pipefail

# The newest release line that builds with Go 1.26 (2.15); bump with its patch releases.
NATS_SERVER_VERSION="${NATS_SERVER_VERSION:-v2.15.2}"
# natscli v0.5.1 is not served by the Go proxy here; v0.5.0 is.
NATS_CLI_VERSION="${NATS_CLI_VERSION:-v0.5.0}"
CACHE="${AGENT_REGISTRY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-registry}"

# build <module path with @version> <binary name> <folder>: go install into the folder
# unless the binary is already there.
build() {
  local module="$1" name="$2" dir="$3"
  if [ -x "$dir/$name" ]; then
    echo "== $name: cached in $dir" >&2
    return
  fi
  echo "== building $module (go install, about 2 minutes on 2 cores)" >&2
  mkdir -p "$dir.partial"
  # CGO off: a static binary that runs on any Linux of the same architecture.
  CGO_ENABLED=0 GOBIN="$dir.partial" go install "$module" >&2
  # Renamed into place only once whole, so an interrupted build is never taken as cached.
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

if ! command -v go >/dev/null 2>&1; then
  echo "scripts/install-nats.sh needs Go (https://go.dev/dl/, or Debian's golang-go)" >&2
  exit 1
fi

server_dir="$CACHE/nats-server-$NATS_SERVER_VERSION"
cli_dir="$CACHE/natscli-$NATS_CLI_VERSION"
build "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION" nats-server "$server_dir"
build "github.com/nats-io/natscli/nats@$NATS_CLI_VERSION" nats "$cli_dir"
"$server_dir/nats-server" --version >&2
"$cli_dir/nats" --version >&2

echo "NATS_SERVER_BIN=$server_dir/nats-server"
echo "NATS_CLI_BIN=$cli_dir/nats"
