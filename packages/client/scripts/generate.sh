#!/usr/bin/env bash
# Writes src/schema.ts, the types of the REST API, from its OpenAPI document: the repository's
# openapi.json (written by `pnpm openapi`), or the file or URL named by OPENAPI_DOCUMENT.
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-src/schema.ts}
node_modules/.bin/openapi-typescript "${OPENAPI_DOCUMENT:-../../openapi.json}" --enum-values --output "$output" >/dev/null
echo "client: wrote $output"
