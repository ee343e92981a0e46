#!/usr/bin/env bash
# ctest's test of one fuzz target: every corpus input once, then <seconds> of fresh fuzzing.
#
#   ctest_fuzz.sh <fuzzer> <seconds> <scratch dir> <corpus dir> [libFuzzer flags...]
#
# libFuzzer's -max_total_time counts from the process's start, the corpus's replay included, and a
# large corpus's replay took all of it: object_decoders (2,286 inputs) replays in 18 s under ASan
# on a quiet machine, so a 10 s run stopped after the replay and fuzzed nothing (and CI replayed
# the corpus twice, once more in a test of its own). Here the fuzzer runs without a time limit
# from the corpus, and gets SIGINT <seconds> after it reports INITED (the replay done): it then
# prints its final stats and exits with -interrupted_exitcode (72). Any other end -- a crash, a
# leak, a sanitizer report, a timeout of one input -- fails the test with the fuzzer's own status
# and its whole output. New inputs go to the scratch directory (the first one given), never into
# the source tree.
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 <fuzzer> <seconds> <scratch dir> <corpus dir> [libFuzzer flags...]" >&2
  exit 2
fi
fuzzer=$1 seconds=$2 scratch=$3 corpus=$4
shift 4
mkdir -p "$scratch"
log=$(mktemp)
pid=
# Stopped itself (ctest's timeout): the fuzzer goes too.
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 143' TERM INT

"$fuzzer" "$@" -interrupted_exitcode=72 "$scratch" "$corpus" >"$log" 2>&1 &
pid=$!
# The replay: until INITED, or the fuzzer's end (a corpus input that fails ends it there).
while kill -0 "$pid" 2>/dev/null && ! grep -q 'INITED cov:' "$log"; do sleep 0.2; done
if kill -0 "$pid" 2>/dev/null; then
  grep -m 1 'INITED cov:' "$log"
  end=$(($(date +%s%N) + seconds * 1000000000))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s%N)" -lt $end ]; do sleep 0.2; done
  kill -INT "$pid" 2>/dev/null
fi
wait "$pid"
rc=$?
if [ $rc -eq 72 ] && grep -q 'INITED cov:' "$log"; then
  grep -E 'run interrupted|^stat::|^Done ' "$log"
  echo "ctest_fuzz: the corpus replayed, then ${seconds} s of fuzzing: no finding"
  exit 0
fi
cat "$log"
echo "ctest_fuzz: $fuzzer ended with status $rc" >&2
exit $((rc == 0 ? 1 : rc))
