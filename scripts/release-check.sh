#!/usr/bin/env bash
# Checks the release configuration the way the release workflow uses it:
# `goreleaser check`, then `goreleaser build --snapshot --clean` for every
# platform of .goreleaser.yaml (into dist/, which is not committed). Not part
# of scripts/test.sh: the build of six binaries takes minutes (docs/fleet.md
# has the figure). goreleaser is installed with go install when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
GORELEASER_VERSION=${GORELEASER_VERSION:-v2.17.0}
bin="$(go env GOPATH)/bin/goreleaser"
if ! command -v goreleaser >/dev/null && [ ! -x "$bin" ]; then
  go install "github.com/goreleaser/goreleaser/v2@${GORELEASER_VERSION}"
fi
command -v goreleaser >/dev/null || PATH="$(go env GOPATH)/bin:$PATH"
goreleaser check
time goreleaser build --snapshot --clean
# Every binary is static: no interpreter, no dynamic section.
for f in dist/keyreg_linux_*/keyreg; do
  if file "$f" | grep -q 'dynamically linked'; then
    echo "$f is dynamically linked" >&2
    exit 1
  fi
done
ls dist/*/keyreg*
