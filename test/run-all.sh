#!/usr/bin/env bash
# `npm test`: every test. The typecheck and the lint (one core, JavaScript) run beside the
# native core tests' build and run (the compiler's share), then the test addon is built and
# ava runs the unit and integration tests; last, the session tests run again with two I/O threads.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0

(npm run --silent typecheck && npm run --silent lint) &
static=$!
native=0
npm run --silent test:native || native=$?
static_rc=0
wait "$static" || static_rc=$?
if [ "$native" -ne 0 ] || [ "$static_rc" -ne 0 ]; then
  echo "npm test: native core tests exit $native, typecheck and lint exit $static_rc" >&2
  exit 1
fi
echo "npm test: native core tests, typecheck and lint took ${SECONDS} s"
SECONDS=0
npm run --silent build:testing
npm run --silent test:ava
echo "npm test: test addon and ava took ${SECONDS} s"
# The session tests again, with every session service on two I/O threads (SessionService.io_threads_size),
# but for session-io-threads*, whose servers all set two.
SECONDS=0
shopt -s extglob
GSF_TEST_IO_THREADS=2 npx ava test/integration/session-!(io-threads*).test.ts test/integration/maintenance.test.ts \
  test/integration/native-sessions*.test.ts test/integration/log-injection.test.ts
echo "npm test: session tests with 2 I/O threads took ${SECONDS} s"
