#!/usr/bin/env bash
# govulncheck (pinned) over the Go modules given (default: the root module and
# infra/), as make test runs it. It fails when a module's code calls a function
# with a known vulnerability (govulncheck exit 3); vulnerabilities only in
# modules or packages that are not called are listed by `govulncheck -show
# verbose` and do not fail. When the vulnerability database cannot be reached
# (a machine without internet), it says so and passes: the check was not made.
#
#   scripts/vulncheck.sh [module dir...]
#   TIX_VULNDB=file:///path/to/mirror scripts/vulncheck.sh   # another database
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

GOVULNCHECK="golang.org/x/vuln/cmd/govulncheck@v1.9.0"
bin="$root/build/tools" # git-ignored; go install rebuilds only when the pin changes
db="${TIX_VULNDB:-https://vuln.go.dev}"
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$root" "$root/infra")

# Can the database be reached? A short probe, so an offline machine does not
# wait on govulncheck's own retries.
reachable() {
	case "$db" in
	file://*) [ -f "${db#file://}/index/db.json" ] ;;
	*)
		if command -v curl >/dev/null 2>&1; then
			curl -fsS -m 5 -o /dev/null "$db/index/db.json" 2>/dev/null
		else
			local host="${db#*://}"
			host="${host%%/*}"
			timeout 5 bash -c "exec 3<>/dev/tcp/$host/443" 2>/dev/null
		fi
		;;
	esac
}

if ! reachable; then
	say "govulncheck: SKIPPED, not run: the vulnerability database $db cannot be reached from this machine (no failure; run make test with internet access, or set TIX_VULNDB to a mirror, to check)"
	exit 0
fi

# Installed, not `go run`: go run reports every failure as exit 1, and exit 3
# (vulnerable code is called) must be told from a failure of the tool.
GOBIN="$bin" go install "$GOVULNCHECK" || { echo "govulncheck: could not install $GOVULNCHECK" >&2; exit 1; }

rc=0
for dir in "${dirs[@]}"; do
	name="${dir#"$root"}"
	name="${name#/}"
	say "govulncheck ($GOVULNCHECK, database $db) in ${name:-the root module}"
	out="$(cd "$dir" && "$bin/govulncheck" -db "$db" ./... 2>&1)"
	code=$?
	case $code in
	0) printf '%s\n' "$out" | grep -v -e '^$' -e "^Use '-show verbose'" ;;
	3)
		printf '%s\n' "$out"
		echo "govulncheck: the code of ${name:-the root module} calls vulnerable functions (above): upgrade the module or the Go toolchain" >&2
		rc=1
		;;
	*)
		printf '%s\n' "$out"
		echo "govulncheck: failed in ${name:-the root module} (exit $code) with the database reachable" >&2
		rc=1
		;;
	esac
done
exit $rc
