#!/usr/bin/env bash
# Fails when src/gen or descriptor-set.binpb differs from what `pnpm generate` makes of the .proto
# files now.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
node_modules/.bin/buf generate --output "$scratch"
node_modules/.bin/buf build --exclude-source-info -o "$scratch/descriptor-set.binpb"
if ! diff -r src/gen "$scratch/src/gen" >/dev/null || ! cmp -s descriptor-set.binpb "$scratch/descriptor-set.binpb"; then
  echo "proto: generated code is out of date; run 'pnpm generate' and commit proto/src/gen and proto/descriptor-set.binpb" >&2
  diff -r src/gen "$scratch/src/gen" | head -40 >&2 || true
  exit 1
fi
echo "proto: generated code is up to date"
