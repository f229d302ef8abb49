#!/usr/bin/env bash
# Fails when src/gen differs from what `buf generate` makes of the .proto files now.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
node_modules/.bin/buf generate --output "$scratch"
if ! diff -r src/gen "$scratch/src/gen" >/dev/null; then
  echo "proto: generated code is out of date; run 'pnpm generate' and commit proto/src/gen" >&2
  diff -r src/gen "$scratch/src/gen" | head -40 >&2
  exit 1
fi
echo "proto: generated code is up to date"
