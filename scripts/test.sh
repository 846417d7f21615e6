#!/usr/bin/env bash
# make test: starts the emulators if they are not running (in memory), runs every
# Go test against them (plus a short fuzz run), and stops what it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

export TIX_STACK_SESSION=test
trap 'scripts/stack.sh stop' EXIT
scripts/stack.sh start --memory

export TIX_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:${TIX_DYNAMODB_PORT:-8000}"
export TIX_TEST_SQS_ENDPOINT="http://127.0.0.1:${TIX_SQS_PORT:-4566}"

say "Running go vet"
go vet ./...
say "Running every test (go test ./...)"
go test -count=1 -timeout 8m ./...
say "Fuzzing the cursor decoder and the catalog import briefly (seeds in testdata/fuzz)"
go test -run '^$' -fuzz '^FuzzCursorDecode$' -fuzztime 10s ./internal/store
go test -run '^$' -fuzz '^FuzzParseCatalog$' -fuzztime 10s ./internal/ticketing
say "All tests passed"
