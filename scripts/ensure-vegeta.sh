#!/usr/bin/env bash
# Prints the path of a vegeta binary (the external open-loop HTTP load generator of
# scripts/bench/field-load.sh), building it from the Go module proxy into .cache/bin/ when neither
# .cache/bin/vegeta nor PATH has one. The build (`go install github.com/tsenart/vegeta/v12@VERSION`)
# takes a minute or two the first time; the binary is then reused. Needs Go (>= 1.22) on PATH or in
# /usr/local/go/bin.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VEGETA_VERSION="${VEGETA_VERSION:-latest}"
bin="$PWD/.cache/bin"

if [ -x "$bin/vegeta" ]; then
  echo "$bin/vegeta"
  exit 0
fi
if command -v vegeta >/dev/null; then
  command -v vegeta
  exit 0
fi
go=$(command -v go || true)
[ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
if [ -z "$go" ]; then
  echo "ensure-vegeta: no vegeta and no Go to build it; install Go >= 1.22 (https://go.dev/dl/) or vegeta v12" >&2
  exit 1
fi
mkdir -p "$bin"
echo "ensure-vegeta: building vegeta $VEGETA_VERSION into .cache/bin (go install, a minute or two the first time)" >&2
log=$(mktemp)
if ! GOBIN="$bin" GOFLAGS="-mod=mod -buildvcs=false" "$go" install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -f "$log"
  echo "ensure-vegeta: go install github.com/tsenart/vegeta/v12@$VEGETA_VERSION failed" >&2
  exit 1
fi
rm -f "$log"
echo "$bin/vegeta"
