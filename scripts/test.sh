#!/usr/bin/env bash
# `npm test`: the whole mocha suite (.mocharc.cjs) against a real stack.
#
# Endpoints: when KAFKA_BROKERS, SCHEMA_REGISTRY_URL, DATABASE_URL and REDIS_URL are all set they
# are used as given; otherwise scripts/stack.sh brings up the missing parts (reusing what runs).
# The endpoints are exported to the tests (and DTE_TEST_STACK=local tells the harness they come
# from the local stack).
#
# At the end, a stack that this script started from nothing is stopped again when CI=true or
# DTE_STACK_STOP=1 (DTE_STACK_STOP=0 keeps it); a stack that was already running is left running.
# Extra arguments go to mocha (e.g. a spec file). The last line of output is `N passed, N failed`;
# the exit code is non-zero when anything failed.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$ROOT" || exit 1

summary_fail() {
  echo "test.sh: $*" >&2
  echo "0 passed, 1 failed"
  exit 1
}

# Node.js 24 LTS first on PATH (the system's, or the registry's binary under .cache/node).
node_dir="$(bash scripts/ensure-node.sh)" || summary_fail "no Node.js 24 (scripts/ensure-node.sh)"
export PATH="$node_dir:$PATH"

t0=$(date +%s)
started_stack=0
given=()
for v in KAFKA_BROKERS SCHEMA_REGISTRY_URL DATABASE_URL REDIS_URL; do
  [ -n "${!v:-}" ] && given+=("$v")
done
if [ "${#given[@]}" -lt 4 ]; then
  before="$(bash scripts/stack.sh status)"
  bash scripts/stack.sh up || summary_fail "the local stack did not come up (see above)"
  # This run started the stack when none of it ran before and some of it runs now (parts that
  # answer but belong to another checkout show as "foreign" and are never stopped here).
  if ! grep -qE '^\S+\s+running' <<<"$before" && grep -qE '^\S+\s+running' <<<"$(bash scripts/stack.sh status)"; then
    started_stack=1
  fi
  eval "$(bash scripts/stack.sh env | sed 's/^/export /')"
  export DTE_TEST_STACK=local
  DTE_STACK_GIVEN="${given[*]:-}"
  export DTE_STACK_GIVEN
fi

stop_after=0
if [ "$started_stack" = 1 ]; then
  if [ "${DTE_STACK_STOP:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${DTE_STACK_STOP:-}" != 0 ]; }; then
    stop_after=1
  fi
fi

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
npx mocha --config .mocharc.cjs "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

if [ "$stop_after" = 1 ]; then
  echo "test.sh: stopping the stack this run started"
  bash scripts/stack.sh down
elif [ "$started_stack" = 1 ]; then
  echo "test.sh: the stack keeps running (scripts/stack.sh down stops it)"
fi
echo "test.sh: suite took $(($(date +%s) - t0)) s"

line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)"
if [ -z "$line" ]; then
  summary_fail "mocha ended (exit $rc) without its summary line"
fi
echo "$line"
if [ "$rc" = 0 ] && ! [[ "$line" =~ ^[0-9]+\ passed,\ 0\ failed ]]; then rc=1; fi
exit "$rc"
