#!/usr/bin/env bash
# make lint: staticcheck and golangci-lint (both pinned below; golangci-lint
# with .golangci.yml) over the Go modules given (default: the root module and
# infra/). Any finding fails. make test runs it.
#
# The tools are installed into build/tools (git-ignored) on first use and again
# only when a pin changes. Their first build costs about 1 (staticcheck) and 2
# to 3 (golangci-lint) minutes of CPU on 2 cores; later runs reuse each tool's
# own analysis cache, so an unchanged tree lints in seconds.
#
#   scripts/golint.sh [module dir...]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

STATICCHECK="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
GOLANGCI="github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0"
bin="$root/build/tools"
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$root" "$root/infra")

# shellcheck source=tools.sh
. "$root/scripts/tools.sh"
install "$STATICCHECK"
install "$GOLANGCI"

rc=0
for dir in "${dirs[@]}"; do
	name="${dir#"$root"}"
	name="${name#/}"
	say "staticcheck (${STATICCHECK##*@}) and golangci-lint (${GOLANGCI##*@}) in ${name:-the root module}"
	(cd "$dir" && "$bin/staticcheck" ./...) || rc=1
	(cd "$dir" && "$bin/golangci-lint" run --config "$root/.golangci.yml" ./...) || rc=1
done
[ $rc -eq 0 ] && echo "    staticcheck and golangci-lint: no findings"
exit $rc
