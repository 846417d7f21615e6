#!/usr/bin/env bash
# Lints the OpenAPI document with the pinned Redocly CLI and Spectral (scripts/
# package.json) and the configurations in scripts/lint/. Any error or warning
# fails; intended exceptions are justified in those configurations.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin=scripts/node_modules/.bin
doc=internal/api/openapi.yaml

# Redocly exits non-zero on errors only; warnings are counted from its summary.
out="$(REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true "$bin/redocly" lint --config scripts/lint/redocly.yaml "$doc" 2>&1)" || {
	echo "$out" >&2
	exit 1
}
if grep -qE "You have [0-9]+ warning" <<<"$out"; then
	grep -vE "║|╔|╚" <<<"$out" >&2
	echo "redocly lint: warnings (fix them, or justify them in scripts/lint/)" >&2
	exit 1
fi
"$bin/spectral" lint --quiet --ruleset scripts/lint/spectral.yaml --fail-severity=warn "$doc"
echo "    redocly and spectral: no warnings"
