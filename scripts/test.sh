#!/usr/bin/env bash
# The one command that passes the tests on a fresh machine (README, "Two commands").
# It installs what the tests need when it is missing (from Debian's packages:
# redis-server, chromium, prometheus, python3-redis, python3-mypy,
# python3-typeshed, nodejs and npm; from the npm registry, into a cache: the
# pinned packages of codegen/typescript/testdata/npm; helm, built with go
# install), then runs the same
# checks as CI: gofmt, go vet, staticcheck, the project's own keys.yaml
# through keyreg lint, and go test.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install installs Debian packages, as root or through sudo.
apt_install() {
	echo "test.sh: installing from Debian's packages: $*" >&2
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if ! command -v redis-server >/dev/null 2>&1; then
	apt_install redis-server redis-tools
fi
# The tests start their own servers; a packaged service is not needed.
redis-server --version

# The tests of the HTML report and the catalogue drive a headless Chromium
# (internal/browsertest); under CI=true they fail without one.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	apt_install chromium
fi

# keyreg serve's tests scrape it with a real Prometheus server, and lint its
# metrics and alert rules with promtool (both in Debian's prometheus package).
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
	apt_install --no-install-recommends prometheus
fi

# The tests of keyreg gen python (codegen/python) run the generated code with
# redis-py, mypy --strict and redis-py's types (types-redis 4.3, in Debian's
# python3-typeshed); under CI=true they fail without them.
if ! /usr/bin/python3 -c 'import redis, mypy' >/dev/null 2>&1 || [ ! -d /usr/lib/python3/dist-packages/redis-stubs ]; then
	apt_install python3 python3-redis python3-mypy python3-typeshed
fi

# The TypeScript backend's tests (codegen/typescript) compile generated code
# with tsc and run it under node with node-redis and ioredis: node and npm
# from Debian's packages, then the pinned npm packages of
# codegen/typescript/testdata/npm installed with npm ci into a cache outside
# the repository (node_modules is never committed).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	apt_install nodejs npm
fi
export KEYREG_NPM_DIR="${KEYREG_NPM_DIR:-$HOME/.cache/keyreg-npm}"
if ! cmp -s codegen/typescript/testdata/npm/package-lock.json "$KEYREG_NPM_DIR/package-lock.json" ||
	[ ! -d "$KEYREG_NPM_DIR/node_modules/typescript" ]; then
	echo "test.sh: npm ci of codegen/typescript/testdata/npm into $KEYREG_NPM_DIR" >&2
	mkdir -p "$KEYREG_NPM_DIR"
	cp codegen/typescript/testdata/npm/package.json codegen/typescript/testdata/npm/package-lock.json "$KEYREG_NPM_DIR/"
	(cd "$KEYREG_NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi

# helm, for TestHelmChart (deploy/helm/keyreg rendered with helm template),
# built once through the Go module proxy into $(go env GOPATH)/bin; under
# CI=true the test fails without it. The first build takes minutes, so it
# runs in the background while the static checks run, and go test waits.
gobin="$(go env GOPATH)/bin"
export PATH="$PATH:$gobin"
helm_pid=""
if ! command -v helm >/dev/null 2>&1; then
	echo "test.sh: installing helm v3.22.0 with go install (in the background)" >&2
	GOBIN="$gobin" go install helm.sh/helm/v3/cmd/helm@v3.22.0 &
	helm_pid=$!
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
race_pkgs=(./audit/... ./cmd/keyreg/... ./examples/keys/... ./internal/redistest/... ./scanner/... ./serve/... ./snapshot/...)
mapfile -t other_pkgs < <(go list ./... | grep -v -E '/(audit|cmd/keyreg|examples/keys|internal/redistest|scanner|serve|snapshot)(/|$)')
export CI="${CI:-true}"
if [ -n "$helm_pid" ]; then
	wait "$helm_pid" || { echo "test.sh: go install of helm failed" >&2; exit 1; }
fi
go test -count=1 -timeout 45m -race "${race_pkgs[@]}"
go test -count=1 -timeout 45m "${other_pkgs[@]}"
