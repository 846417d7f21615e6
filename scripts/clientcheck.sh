#!/usr/bin/env bash
# Generates the clients an integrator would generate from the OpenAPI document
# (internal/api/openapi.yaml, served as /v1/openapi.json) and compiles them:
#   - Go: oapi-codegen (pinned by the tool directive of scripts/clientcheck/go.mod)
#     with -generate types,client, compiled and tested with scripts/clientcheck/*_test.go;
#   - Go: ogen (pinned the same way; scripts/clientcheck/ogen.yml: the client only),
#     tested with scripts/clientcheck/ogen/open_enums_test.go;
#   - TypeScript: openapi-typescript + openapi-fetch (pinned in scripts/package.json),
#     compiled by tsc --strict with scripts/clientcheck/ts/usage.ts, and
#     scripts/clientcheck/ts/openenums.ts compiled and run with node.
# Each client is run over real responses (internal/api/testdata/bodies.golden)
# with an enum value rewritten to one it does not know (recorded/cases.json):
# the contract's enums are open, and each client must take the value as it came.
# Everything generated goes to a temporary directory, removed on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
doc="$root/internal/api/openapi.yaml"
check="$root/scripts/clientcheck"
bin="$root/scripts/node_modules/.bin"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

export TIX_BODIES_GOLDEN="$root/internal/api/testdata/bodies.golden" TIX_CLIENTCHECK_CASES="$check/recorded/cases.json"

mkdir -p "$tmp/go/ogen" "$tmp/ts/out"
cp -r "$check/go.mod" "$check/go.sum" "$check"/*_test.go "$check/recorded" "$tmp/go/"
cp "$check/ogen/open_enums_test.go" "$tmp/go/ogen/"
(cd "$check" && go tool oapi-codegen -generate types,client -package tixclient "$doc") >"$tmp/go/client.go"
(cd "$check" && go tool ogen -loglevel error -config ogen.yml -package tixogen -target "$tmp/go/ogen" "$doc")
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

# openenums.ts is emitted as an ES module next to a node_modules link and run.
cp "$check/ts/openenums.ts" "$tmp/ts/"
ln -s "$root/scripts/node_modules" "$tmp/ts/node_modules"
echo '{"type":"module"}' >"$tmp/ts/out/package.json"
cat >"$tmp/ts/tsconfig.run.json" <<JSON
{
  "compilerOptions": {
    "strict": true, "outDir": "out", "target": "ES2022", "module": "ESNext",
    "moduleResolution": "Bundler", "skipLibCheck": true,
    "lib": ["ES2022", "DOM"], "types": ["node"], "typeRoots": ["$root/scripts/node_modules/@types"]
  },
  "files": ["openenums.ts", "schema.d.ts"]
}
JSON
"$bin/tsc" -p "$tmp/ts/tsconfig.run.json"
node "$tmp/ts/out/openenums.js"
echo "    Go clients (oapi-codegen, ogen) and strict TypeScript client (openapi-typescript + openapi-fetch) compile and take unknown enum values"
