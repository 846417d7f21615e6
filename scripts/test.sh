#!/usr/bin/env bash
# make test: starts the emulators and MailDev if they are not running (in memory), runs every
# Go test against them (fuzz seeds in testdata/fuzz run as ordinary tests), and
# stops what it started. Open-ended fuzzing is `make fuzz`: it is random by nature and
# does not belong in a gate that must be deterministic.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

export TIX_STACK_SESSION=test
trap 'scripts/stack.sh stop' EXIT
scripts/stack.sh start --memory

export TIX_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:${TIX_DYNAMODB_PORT:-8000}"
export TIX_TEST_SQS_ENDPOINT="http://127.0.0.1:${TIX_SQS_PORT:-4566}"
export TIX_TEST_SMTP_ENDPOINT="127.0.0.1:${TIX_SMTP_PORT:-1025}"
export TIX_TEST_MAILDEV_URL="http://127.0.0.1:${TIX_MAILDEV_PORT:-1080}"

say "Running go vet"
go vet ./...
# make lint (staticcheck and golangci-lint, root module and infra/) runs beside the
# tests, which mostly wait on the emulators: on a first run its tool builds and first
# analysis are minutes of CPU. Its output follows the tests'; either failing fails.
lintlog="$(mktemp)"
say "Linting (staticcheck, golangci-lint) beside the tests; the linters' output follows the tests'"
scripts/golint.sh >"$lintlog" 2>&1 &
lintpid=$!
say "Running every test (go test ./...)"
# -parallel 4: the parallel tests (internal/api's HTTP tests above all) wait on the
# emulators more than they compute, so twice GOMAXPROCS on 2 cores overlaps them better.
testrc=0
go test -count=1 -parallel 4 -timeout 8m ./... || testrc=$?
lintrc=0
wait "$lintpid" || lintrc=$?
cat "$lintlog"
rm -f "$lintlog"
if [ "$testrc" -ne 0 ] || [ "$lintrc" -ne 0 ]; then
	[ "$testrc" -eq 0 ] || say "go test failed (its output is above the linters')"
	[ "$lintrc" -eq 0 ] || say "the linters found something (just above)"
	exit 1
fi
say "Linting the OpenAPI document (redocly, spectral; scripts/lint/)"
scripts/lint.sh
say "Generating the Go and TypeScript clients from the OpenAPI document and compiling them"
scripts/clientcheck.sh
# infra/ is its own Go module (the CDK app), outside ./... above. Its tests
# synthesize the dev and prod stacks offline (jsii runs aws-cdk-lib in Node) and
# check the templates; no emulator or AWS account. The first compile of the CDK
# bindings takes a few minutes; later runs reuse the Go build cache.
say "Checking the CDK stack (cd infra: go vet, go test: template assertions, offline)"
(cd infra && export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 &&
	go vet ./... && go test -count=1 -timeout 15m ./...)
# Known vulnerabilities in called code fail; an unreachable database is said
# plainly and does not (scripts/vulncheck.sh).
scripts/vulncheck.sh
say "All tests passed"
