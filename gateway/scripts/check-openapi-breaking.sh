#!/usr/bin/env bash
# Fails when openapi.json breaks clients of the document it replaces: the one committed at
# $OPENAPI_BASE_REF (default HEAD, so the uncommitted change is judged; CI on a branch sets the
# target branch, e.g. origin/main). `redocly diff` rates each change by the semver bump it needs;
# a major one (an operation, a field or a status removed, a field made required, an operationId
# renamed, a bound narrowed…) fails. Breaking changes get /api/v2 instead (decisions §10).
set -euo pipefail
cd "$(dirname "$0")/../.."
base_ref=${OPENAPI_BASE_REF:-HEAD}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! git show "$base_ref:openapi.json" >"$scratch/base.json" 2>/dev/null; then
  echo "openapi: breaking-change check skipped: no openapi.json committed at $base_ref yet"
  exit 0
fi
if cmp -s "$scratch/base.json" openapi.json; then
  echo "openapi: openapi.json is as committed at $base_ref"
  exit 0
fi
# An enum that gains a value (a new tool type, event type or status) is an addition, which
# docs/api.md tells clients to expect: they take a value they do not know as such. redocly rates
# it major in an answer; the platform's rule does not.
node_modules/.bin/redocly diff "$scratch/base.json" openapi.json --fail-on major --skip-rule enum-values-added
echo "openapi: no breaking change since $base_ref"
