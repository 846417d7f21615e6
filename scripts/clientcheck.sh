#!/usr/bin/env bash
# Generates the clients an integrator would generate from the OpenAPI document
# (internal/api/openapi.yaml, served as /v1/openapi.json) and compiles them:
#   - Go: oapi-codegen (pinned by the tool directive of scripts/clientcheck/go.mod)
#     with -generate types,client, compiled and tested with scripts/clientcheck/client_test.go;
#   - TypeScript: openapi-typescript + openapi-fetch (pinned in scripts/package.json),
#     compiled by tsc --strict with scripts/clientcheck/ts/usage.ts.
# Everything generated goes to a temporary directory, removed on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
doc="$root/internal/api/openapi.yaml"
check="$root/scripts/clientcheck"
bin="$root/scripts/node_modules/.bin"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/go" "$tmp/ts"
cp "$check/go.mod" "$check/go.sum" "$check/client_test.go" "$tmp/go/"
(cd "$check" && go tool oapi-codegen -generate types,client -package tixclient "$doc") >"$tmp/go/client.go"
(cd "$tmp/go" && go vet -tags clientcheck ./... && go test -count=1 -tags clientcheck ./...)

"$bin/openapi-typescript" "$doc" --output "$tmp/ts/schema.d.ts" --silent
cp "$check/ts/usage.ts" "$tmp/ts/"
cat >"$tmp/ts/tsconfig.json" <<JSON
{
  "compilerOptions": {
    "strict": true, "noEmit": true, "target": "ES2022", "module": "ESNext",
    "moduleResolution": "Bundler", "skipLibCheck": false, "noUncheckedIndexedAccess": false,
    "lib": ["ES2022", "DOM"], "types": [],
    "baseUrl": ".", "paths": { "openapi-fetch": ["$root/scripts/node_modules/openapi-fetch"] }
  },
  "files": ["usage.ts", "schema.d.ts"]
}
JSON
"$bin/tsc" -p "$tmp/ts/tsconfig.json"
echo "    Go client (oapi-codegen) and strict TypeScript client (openapi-typescript + openapi-fetch) compile"
