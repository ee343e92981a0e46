#!/usr/bin/env bash
# The test command (README; CI runs exactly this through .ci/run): installs what is missing, then
# builds and tests three configurations and fails if any test, sanitizer report or fuzz target does.
#
#   build/       GCC (the production compiler), -O2 -g1, every test.
#   build-asan/  clang 14, ASan + UBSan (every report fatal) + libFuzzer coverage, -O0: every test
#                again, each fuzz target's corpus replayed and 10 s of fresh fuzzing per target.
#   build-tsan/  clang 14, TSan, -O0: only what runs threads (kube transport/reflectors on the Asio
#                loop, the HTTP server, the sim API server, the probe and scenario player threads,
#                and the daemon end to end: scrape vs ingest), i.e. the ctest labels in TSAN_LABELS.
#
# Sanitizer reports of every process (test binaries, the firstworkd they start, fuzzers) go to
# <dir>/sanitizer-reports/; any file there fails the run and is printed at the end, so a report in a
# child process whose exit status a test does not check still counts. Suppressions (third-party
# false positives only, each with its reason) are in tests/sanitizer/.
#
# CI layout on a fresh 2-core machine, and why it fits in 20 minutes. The tests are mostly waiting
# (scenarios play at 120x real time, daemons poll): GCC's whole suite is ~15 CPU-s in ~2 min of
# wall time. Compiling is what costs, so each test run overlaps the next compile, which runs under
# `nice` so the tests keep the CPU they need:
#
#   stage                                                 measured here (CPU-s | wall on 2 cores)
#   1 install-deps: +clang-14, libclang-rt-14-dev           (~50 MB of .debs; ~1 min on a fresh VM)
#   2 build/ GCC -O2 -g1, unity                               MEASURE
#   3 ctest build/ (-j4)        ‖ 4 build-asan/ (nice, -j2)   MEASURE
#   5 ctest build-asan/ + fuzz  ‖ 6 build-tsan/ (nice, -j2)   MEASURE
#   7 ctest build-tsan/ -L TSAN_LABELS                        MEASURE
#
# What made it fit (CPU-seconds of the builds, measured on this machine):
#   the same tree as plain RelWithDebInfo (-O2 -g) GCC: 795 CPU-s; clang ASan+UBSan at -O1: 1224.
#   -g1 instead of -g (GCC) and -O0 instead of -O1 (sanitizer builds) cut ~1/3 and ~1/2 of each
#   file; unity builds (cmake/UnityBuild.cmake) another ~40% of what is left; one clang build serves
#   ASan, UBSan and the fuzzers; TSan builds only the threaded tests and the daemon.
#
# Environment: FIRSTWORK_CHECKS=all (default) | plain (build/ and its tests only: the quick local
# loop); BUILD_DIR, ASAN_BUILD_DIR, TSAN_BUILD_DIR (default build, build-asan, build-tsan);
# FIRSTWORK_FUZZ_SECONDS (default 10) per target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
ASAN=${ASAN_BUILD_DIR:-build-asan}
TSAN=${TSAN_BUILD_DIR:-build-tsan}
CHECKS=${FIRSTWORK_CHECKS:-all}
JOBS=$(nproc)
TSAN_LABELS='^firstwork_(kube|http|sim|signals|scenario|integration)_tests$'

started=$SECONDS
summary=()
stage() { echo "== test.sh $(date +%T) $*"; }
took() { summary+=("$(printf '%-44s %4ds' "$1" $((SECONDS - $2)))"); }

# Configures $1 with the rest as cmake arguments (unity, warnings as errors, Ninja).
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DFIRSTWORK_WARNINGS_AS_ERRORS=ON -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
}

# Sanitizer options for the processes of one ctest run; reports land in $1/sanitizer-reports.
sanitizer_env() {
  local reports=$ROOT/$1/sanitizer-reports
  rm -rf "$reports" && mkdir -p "$reports"
  local supp=$ROOT/tests/sanitizer
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:log_path=$reports/asan"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan:suppressions=$supp/tsan.supp"
}

# Runs ctest in $1 with the remaining arguments; output in $1/ctest.log (printed on failure).
run_ctest() {
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure --timeout 900 "$@") >"$dir/ctest.log" 2>&1
}

# Fails (after printing them) when sanitizer reports exist in $1.
check_reports() {
  local reports=$1/sanitizer-reports
  if compgen -G "$reports/*" >/dev/null; then
    echo "test.sh: sanitizer reports in $reports:" >&2
    for f in "$reports"/*; do echo "--- $f" >&2; cat "$f" >&2; done
    return 1
  fi
}

failed=()
# Waits for background job $2 (a ctest run in $3); records stage $1 as failed when it fails.
finish() {
  local name=$1 pid=$2 dir=$3 t0=$4
  if wait "$pid"; then
    echo "== test.sh $name: passed ($(grep -a 'tests passed' "$dir/ctest.log" || true))"
  else
    echo "== test.sh $name: FAILED"; tail -n 60 "$dir/ctest.log"; failed+=("$name")
  fi
  if [ "$name" != "ctest build" ] && ! check_reports "$dir"; then failed+=("$name: sanitizer reports"); fi
  took "$name" "$t0"
}

stage "install-deps"; t=$SECONDS
bash scripts/install-deps.sh
took "install-deps" $t

stage "build $BUILD (GCC, -O2 -g1)"; t=$SECONDS
configure "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build "$BUILD" -j "$JOBS"
took "build $BUILD" $t

stage "ctest $BUILD"; t_plain=$SECONDS
run_ctest "$BUILD" -j $((JOBS * 2)) &
plain=$!

if [ "$CHECKS" = plain ]; then
  finish "ctest build" $plain "$BUILD" $t_plain
else
  # The sanitizer builds: clang 14, -O0 (they run tests that mostly wait; compile time is what
  # counts), line tables for symbolised reports, assertions on.
  san_flags=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug
             "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" -DFIRSTWORK_BUILD_BENCH=OFF)

  stage "build $ASAN (clang ASan+UBSan+libFuzzer, -O0; nice)"; t=$SECONDS
  configure "$ASAN" "${san_flags[@]}" -DFIRSTWORK_BUILD_FUZZERS=ON \
    -DFIRSTWORK_FUZZ_SECONDS="${FIRSTWORK_FUZZ_SECONDS:-10}"
  nice -n 19 cmake --build "$ASAN" -j "$JOBS"
  took "build $ASAN" $t
  finish "ctest build" $plain "$BUILD" $t_plain

  stage "ctest $ASAN (every test, fuzz corpora, fuzzing)"; t_asan=$SECONDS
  (sanitizer_env "$ASAN" && run_ctest "$ASAN" -j $((JOBS * 2))) &
  asan=$!

  stage "build $TSAN (clang TSan, -O0, threaded tests + firstworkd; nice)"; t=$SECONDS
  configure "$TSAN" "${san_flags[@]}" -DFIRSTWORK_SANITIZE=thread
  nice -n 19 cmake --build "$TSAN" -j "$JOBS" --target firstworkd firstwork_kube_tests \
    firstwork_http_tests firstwork_sim_tests firstwork_signals_tests firstwork_scenario_tests \
    firstwork_integration_tests
  took "build $TSAN" $t
  finish "ctest build-asan" $asan "$ASAN" $t_asan

  stage "ctest $TSAN (threaded tests)"; t_tsan=$SECONDS
  (sanitizer_env "$TSAN" && run_ctest "$TSAN" -j $((JOBS * 2)) -L "$TSAN_LABELS" -FC firstwork_test_logs) &
  finish "ctest build-tsan" $! "$TSAN" $t_tsan
fi

took "total" $started
printf '%s\n' "== test.sh timings (wall):" "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  printf '== test.sh FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== test.sh: all passed"
