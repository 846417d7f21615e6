#!/usr/bin/env bash
# make run: starts the emulators (keeping data under .data/), then the all-in-one
# local runner, which creates the table and queues, seeds the demo catalog once,
# prints demo keys and serves /v1 on 127.0.0.1:8080. Ctrl-C stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

export TIX_STACK_SESSION=run
trap 'scripts/stack.sh stop' EXIT
scripts/stack.sh start

say "Building the local runner"
mkdir -p .data/bin
go build -o .data/bin/tix-local ./scripts/local
export TIX_DYNAMODB_ENDPOINT="${TIX_DYNAMODB_ENDPOINT:-http://127.0.0.1:${TIX_DYNAMODB_PORT:-8000}}"
export TIX_SQS_ENDPOINT="${TIX_SQS_ENDPOINT:-http://127.0.0.1:${TIX_SQS_PORT:-4566}}"
export TIX_SMTP_ADDR="${TIX_SMTP_ADDR:-127.0.0.1:${TIX_SMTP_PORT:-1025}}"
export TIX_MAILDEV_URL="${TIX_MAILDEV_URL:-http://127.0.0.1:${TIX_MAILDEV_PORT:-1080}}"
# Not exec: the trap above must stop the emulators when the runner ends.
.data/bin/tix-local
