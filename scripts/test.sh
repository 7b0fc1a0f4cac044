#!/usr/bin/env bash
# The one command that passes the tests on a fresh machine (README, "Two commands").
# It installs what the tests need (redis-server and chromium from Debian's
# packages) when they are missing, then runs the same checks as CI: gofmt, go vet, staticcheck,
# the project's own keys.yaml through keyreg lint, and go test.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
	echo "test.sh: installing redis-server from Debian's packages" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server redis-tools >/dev/null
fi
# The tests start their own servers; a packaged service is not needed.
redis-server --version

# The tests of the HTML report and the catalogue drive a headless Chromium
# (internal/browsertest); under CI=true they fail without one.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	echo "test.sh: installing chromium from Debian's packages" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

# The TypeScript backend's tests (codegen/typescript) compile generated code
# with tsc and run it under node with node-redis and ioredis: node and npm
# from Debian's packages, then the pinned npm packages of
# codegen/typescript/testdata/npm installed with npm ci into a cache outside
# the repository (node_modules is never committed).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "test.sh: installing nodejs and npm from Debian's packages" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
fi
export KEYREG_NPM_DIR="${KEYREG_NPM_DIR:-$HOME/.cache/keyreg-npm}"
if ! cmp -s codegen/typescript/testdata/npm/package-lock.json "$KEYREG_NPM_DIR/package-lock.json" ||
	[ ! -d "$KEYREG_NPM_DIR/node_modules/typescript" ]; then
	echo "test.sh: npm ci of codegen/typescript/testdata/npm into $KEYREG_NPM_DIR" >&2
	mkdir -p "$KEYREG_NPM_DIR"
	cp codegen/typescript/testdata/npm/package.json codegen/typescript/testdata/npm/package-lock.json "$KEYREG_NPM_DIR/"
	(cd "$KEYREG_NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi

# No large file is ever tracked: test binaries, dumps and screenshots over
# 2 MB are refused. The allow-list names the fixtures that may be larger
# (none today); add one here only with a reason in its commit.
large_allowed=()
too_large=$(git ls-files -z 2>/dev/null | xargs -0 -r stat -c '%s %n' -- 2>/dev/null |
	awk -v allowed=" ${large_allowed[*]:-} " '$1 > 2097152 && index(allowed, " " substr($0, index($0, " ") + 1) " ") == 0')
if [ -n "$too_large" ]; then
	echo "tracked files over 2 MB (bytes, path; see large_allowed in scripts/test.sh):" >&2
	echo "$too_large" >&2
	exit 1
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go run ./cmd/keyreg lint
# Under CI=true, tests that need redis-server fail instead of skipping.
# The packages that talk to Redis (concurrent scans, probes, cancellation)
# run under the race detector; the rest run without it, to keep CI fast.
race_pkgs=(./audit/... ./cmd/keyreg/... ./examples/keys/... ./internal/redistest/... ./scanner/... ./snapshot/...)
mapfile -t other_pkgs < <(go list ./... | grep -v -E '/(audit|cmd/keyreg|examples/keys|internal/redistest|scanner|snapshot)(/|$)')
export CI="${CI:-true}"
go test -count=1 -race "${race_pkgs[@]}"
go test -count=1 "${other_pkgs[@]}"
