#!/usr/bin/env bash
# Fails when the .proto files break wire or generated-code compatibility (buf.yaml's FILE rules)
# with the last release: the newest tag v* reachable from HEAD. Before the first release there is
# nothing to break, and it says so.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(git rev-parse --show-toplevel 2>/dev/null || true)
tag=$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || true)
if [ -z "$tag" ]; then
  echo "proto: buf breaking skipped: no release tag (v*) yet"
  exit 0
fi
node_modules/.bin/buf breaking --against "$repo/.git#tag=$tag,subdir=proto"
echo "proto: no breaking change since $tag"
