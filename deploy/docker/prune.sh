#!/bin/sh
# What goes into a service's image, and nothing else: its compiled dist/ and the production
# dependencies it and the workspace packages it uses need, installed in <out>/node_modules, with
# what the service's finish-image step adds or takes away (below).
# The Dockerfile runs this after `pnpm build`; so does the test that starts a pruned service.
# Usage: deploy/docker/prune.sh <package directory, e.g. services/identity> <out directory>
set -eu
package_dir="$1"
out="$2"
test -f "$package_dir/dist/main.js" || { echo "prune: $package_dir/dist/main.js is missing; run pnpm build first" >&2; exit 1; }
# --legacy: the workspace links its packages instead of injecting copies (edits to a package
# reach every service at once while developing), which the newer deploy mode requires.
pnpm --filter "./$package_dir" --prod deploy --legacy "$out"
# What only the service's own code can make for its image: its dist/finish-image.js, run on the
# result. agent-memory's writes its word-vector cache, which the read-only image could never write
# at run time, and drops the 300 MB file the cache is made from.
if [ -f "$out/dist/finish-image.js" ]; then node --conditions=compiled "$out/dist/finish-image.js"; fi
