#!/usr/bin/env bash
# Fails when src/schema.ts differs from what `pnpm generate` makes of the OpenAPI document now.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
bash scripts/generate.sh "$scratch/schema.ts" >/dev/null
if ! diff -u src/schema.ts "$scratch/schema.ts" >"$scratch/diff"; then
  echo "client: src/schema.ts is out of date with the OpenAPI document; run 'pnpm --filter @agent-platform/client generate' and commit it" >&2
  head -60 "$scratch/diff" >&2
  exit 1
fi
echo "client: src/schema.ts is up to date"
