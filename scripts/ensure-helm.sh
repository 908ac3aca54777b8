#!/usr/bin/env bash
# Prints the path of a helm binary, building the pinned version from the Go module proxy into
# .cache/bin/ when neither .cache/bin/helm nor PATH has one of that major version. The build
# (`go install helm.sh/helm/v3/cmd/helm@HELM_VERSION`) takes minutes the first time; the binary
# is then reused. Needs Go (>= 1.24) on PATH or in /usr/local/go/bin.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
HELM_VERSION="${HELM_VERSION:-v3.19.5}"
bin="$PWD/.cache/bin"

if [ -x "$bin/helm" ]; then
  echo "$bin/helm"
  exit 0
fi
if command -v helm >/dev/null && helm version --short 2>/dev/null | grep -q '^v3\.'; then
  command -v helm
  exit 0
fi
go=$(command -v go || true)
[ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
if [ -z "$go" ]; then
  echo "ensure-helm: no helm and no Go to build it; install Go >= 1.24 (https://go.dev/dl/) or helm v3" >&2
  exit 1
fi
mkdir -p "$bin"
echo "ensure-helm: building helm $HELM_VERSION into .cache/bin (go install, a few minutes the first time)" >&2
log=$(mktemp)
if ! GOBIN="$bin" GOFLAGS=-buildvcs=false "$go" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -f "$log"
  echo "ensure-helm: go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed" >&2
  exit 1
fi
rm -f "$log"
echo "$bin/helm"
