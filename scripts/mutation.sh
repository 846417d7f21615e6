#!/usr/bin/env bash
# make mutation: mutation testing of the domain (internal/ticketing) with its
# own emulator-free tests (in-memory store, internal/inmem), by gremlins
# (pinned below, installed into build/tools like scripts/golint.sh's tools).
# Not part of make test: every mutant is a rebuild and a test run, minutes in all.
#
# Gremlins mutates each covered comparison, sum and increment of the package
# in turn and runs the package's tests: a mutant the tests do not notice
# LIVES. The run fails when fewer than MUTATION_EFFICACY percent (default 90)
# of the tested mutants are killed, or when any mutant lives in the money
# paths (payment.go, order_lifecycle.go, reconcile.go, live_payment.go).
# The support package ticketingtest/ (conformance suites run against the real
# stores) is not mutated.
#
#   scripts/mutation.sh            # the whole package
#   scripts/mutation.sh --money    # only the money paths (a few minutes)
#
# MUTATION_WORKERS (default 1) and MUTATION_TIMEOUT_COEFFICIENT (default 20)
# are passed to gremlins: on a loaded machine a test run is slow, and a low
# coefficient reports slow runs as TIMED OUT mutants that are not.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

GREMLINS="github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"
bin="$root/build/tools"
pkg="internal/ticketing"
money=(payment.go order_lifecycle.go reconcile.go live_payment.go)

# shellcheck source=tools.sh
. "$root/scripts/tools.sh"
install "$GREMLINS"

args=(-E 'ticketingtest/')
if [ "${1:-}" = "--money" ]; then
	for f in "$root/$pkg"/*.go; do
		f="${f##*/}"
		case "$f" in *_test.go) continue ;; esac
		[[ " ${money[*]} " == *" $f "* ]] || args+=(-E "^${f//./\\.}\$")
	done
fi

log="$root/build/mutation.log"
mkdir -p "$root/build"
say "gremlins ${GREMLINS##*@} over $pkg${1:+ ($1)}; the log is build/mutation.log"
(cd "$root" && "$bin/gremlins" unleash --workers "${MUTATION_WORKERS:-1}" \
	--timeout-coefficient "${MUTATION_TIMEOUT_COEFFICIENT:-20}" \
	--threshold-efficacy "${MUTATION_EFFICACY:-90}" "${args[@]}" "./$pkg") 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

lived=$(grep -E '^[[:space:]]*LIVED .* at ('"$(IFS='|'; echo "${money[*]}")"'):' "$log")
if [ -n "$lived" ]; then
	echo "mutation: mutants live in the money paths; a test must catch each:" >&2
	echo "$lived" >&2
	rc=1
fi
exit $rc
