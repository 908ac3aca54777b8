#!/usr/bin/env bash
# `npm run build`: compiles every package and service to JavaScript (tsc -b: src/ -> dist/, with
# source maps and declarations, in dependency order), then copies each src/'s non-TypeScript files
# (the dashboard's static files, the resident xmllint helper) to the same place under dist/.
# Development and the tests run the TypeScript sources through tsx and need none of this; the
# image and `node <workspace>/dist/main.js` do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
node scripts/build/write-build-configs.cjs --check
npx tsc -b tsconfig.build.json "$@"
for ws in packages/* services/*; do
  [ -d "$ws/src" ] || continue
  (cd "$ws/src" && find . -type f ! -name '*.ts' -print0) | while IFS= read -r -d '' f; do
    mkdir -p "$ws/dist/$(dirname "$f")"
    cp -p "$ws/src/$f" "$ws/dist/$f"
  done
done
