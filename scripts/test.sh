#!/usr/bin/env bash
# The test command (README; CI runs exactly this through .ci/run): installs what is missing, then
# builds and runs every test under the sanitizers, and fails if any test, sanitizer report or fuzz
# target does.
#
#   build-asan/  clang 14, ASan + UBSan (every report fatal; LSan for leaks) + libFuzzer coverage:
#                the whole suite (unit, end-to-end, scenarios, fault soak, security, benchmark
#                smoke runs), every fuzz target's corpus replayed, and FIRSTWORK_FUZZ_SECONDS (10)
#                of fresh fuzzing per target.
#   build-tsan/  GCC 12 (the production compiler, so CI compiles the daemon with both), TSan:
#                what runs threads -- the kube transport and reflectors on the Asio loop, the HTTP
#                server and /metrics snapshot, the API test server, the PromQL probe, the
#                scenario player and the store's commit thread (their unit tests) -- and the
#                daemon end to end (`firstworkd run` following a worker outage; a real Prometheus
#                scraping firstworkd while it ingests the drills: scrape vs ingest), driven by
#                build-asan's end-to-end tests.
#
# Sanitizer reports of every process (test binaries, the firstworkd they start, fuzzers) go to
# <dir>/sanitizer-reports/; any file there fails the run and is printed, so a report from a child
# process whose exit status a test does not check still counts. Suppressions (third-party false
# positives only, each with its reason) are in tests/sanitizer/.
#
# CI gets 20 minutes on a fresh 2-core machine, and compiling is what costs. Measured here (CPU-s
# of the whole build, unity batches): GCC -O2 -g1 of everything 690; clang ASan+UBSan+coverage at
# -O0 580, at -O1 1055. Both sanitizer builds therefore compile the daemon's sources (src/) at -O1,
# so the daemons and API servers the tests start run at a usable speed, and everything else (tests,
# benchmarks, fuzz drivers: most of the compile) at -O0: ASan 750 CPU-s, TSan (only what it runs)
# 220 CPU-s. By session 52 the suite had grown past the 20 minutes (1,357 s on CI, 1,454 s here:
# the ASan build 780 s of it, 1,659 CPU-s), and two changes cut the build: UBSan and libFuzzer's
# coverage only in the code under test (src/, fuzz/; cmake/ProjectOptions.cmake), not in the
# tests' own code (a test batch 36 -> 25 s), and every executable linked with lld (3.4 -> 0.9 s
# for a test executable): the whole run here 1,454 -> 1,106 s (the ASan build 780 -> 599 s; the
# ASan tests, beside the TSan build, 607 -> 445 s), with each fuzz target now fuzzed for its 10 s
# after its corpus (fuzz/ctest_fuzz.sh). There is no third, unsanitized run of the suite: every test runs in build-asan, and
# the daemon the README's demo command builds shares every source with both builds; only its heap
# allocator differs (jemalloc; sanitizers bring their own), which build-plain checks with the
# core's tests (≈ 40 CPU-s).
# FIRSTWORK_CHECKS=plain is the quick local loop: GCC RelWithDebInfo into build/, every test, no
# sanitizers.
#
# Order (the TSan build runs at nice 19 beside the ASan tests, which mostly wait on drills):
#   install-deps -> build-asan -> ctest build-asan || build build-tsan, build-plain (core tests)
#   -> ctest build-tsan -> ctest build-plain
#
# Environment: FIRSTWORK_CHECKS=all (default) | plain; BUILD_DIR (plain, default build),
# ASAN_BUILD_DIR (build-asan), TSAN_BUILD_DIR (build-tsan), PLAIN_BUILD_DIR (build-plain: the
# core's tests on jemalloc); FIRSTWORK_FUZZ_SECONDS (10);
# CTEST_JOBS (6: most tests wait on drills, and the end-to-end ones reserve 2 slots each);
# TSAN_CTEST_JOBS (4: the TSan unit tests are CPU-bound).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CHECKS=${FIRSTWORK_CHECKS:-all}
JOBS=$(nproc)
CTEST_JOBS=${CTEST_JOBS:-6}
TSAN_CTEST_JOBS=${TSAN_CTEST_JOBS:-4}

started=$SECONDS
# A failed build must not leave the background ASan test run behind.
trap 'jobs -p | xargs -r kill 2>/dev/null' EXIT
summary=()
failed=()
stage() { echo "== test.sh $(date +%T) $*"; }
took() { summary+=("$(printf '%-34s %5ds' "$1" $((SECONDS - $2)))"); }

# configure <dir> <cmake args...>: Ninja, warnings as errors, linked with lld (unity builds are
# the default).
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DFIRSTWORK_WARNINGS_AS_ERRORS=ON -DFIRSTWORK_LINKER=lld "$@" >/dev/null
}

# Sanitizer options for the processes of one ctest run; reports land in $1/sanitizer-reports.
sanitizer_env() {
  local reports=$ROOT/$1/sanitizer-reports supp=$ROOT/tests/sanitizer
  rm -rf "$reports" && mkdir -p "$reports"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:check_initialization_order=1:strict_init_order=1:log_path=$reports/asan"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan:suppressions=$supp/tsan.supp"
}

# run_ctest <log> <name> <ctest args...>: output appended to <log>, its failures printed.
run_ctest() {
  local log=$1 name=$2
  shift 2
  if ctest --output-on-failure --timeout 900 "$@" >>"$log" 2>&1; then
    echo "== test.sh $name: $(grep -a 'tests passed' "$log" | tail -n 1)"
  else
    echo "== test.sh $name: FAILED"
    grep -a -A 40 -E '\*\*\*|FAILED' "$log" | tail -n 200
    grep -a -E 'tests passed|The following tests FAILED' -A 30 "$log" | tail -n 40
    failed+=("$name")
  fi
}

# check_reports <dir> <name>: fails (after printing them) when sanitizer reports exist.
check_reports() {
  local reports=$1/sanitizer-reports
  if compgen -G "$reports/*" >/dev/null; then
    echo "== test.sh $2: sanitizer reports in $reports:" >&2
    for f in "$reports"/*; do echo "--- $f" >&2; head -n 80 "$f" >&2; done
    failed+=("$2: sanitizer reports")
  fi
}

stage "install-deps"; t=$SECONDS
bash scripts/install-deps.sh
took "install-deps" $t

if [ "$CHECKS" = plain ]; then
  BUILD=${BUILD_DIR:-build}
  stage "build $BUILD (GCC, RelWithDebInfo)"; t=$SECONDS
  configure "$BUILD"
  cmake --build "$BUILD" -j "$JOBS"
  took "build $BUILD" $t
  stage "ctest $BUILD"; t=$SECONDS
  rm -f "$BUILD/ctest.log"
  run_ctest "$BUILD/ctest.log" "ctest $BUILD" --test-dir "$BUILD" -j "$CTEST_JOBS"
  took "ctest $BUILD" $t
else
  ASAN=${ASAN_BUILD_DIR:-build-asan}
  TSAN=${TSAN_BUILD_DIR:-build-tsan}
  PLAIN=${PLAIN_BUILD_DIR:-build-plain}

  stage "build $ASAN (clang 14, ASan+UBSan+libFuzzer coverage)"; t=$SECONDS
  configure "$ASAN" -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" \
    -DFIRSTWORK_SOURCE_FLAGS=-O1 -DFIRSTWORK_BUILD_FUZZERS=ON -DFIRSTWORK_FUZZ_SECONDS="${FIRSTWORK_FUZZ_SECONDS:-10}"
  cmake --build "$ASAN" -j "$JOBS"
  took "build $ASAN" $t

  stage "ctest $ASAN: every test, fuzz corpora and fuzzing (background)"; t_asan=$SECONDS
  rm -f "$ASAN/ctest.log"
  (sanitizer_env "$ASAN" && run_ctest "$ASAN/ctest.log" "ctest $ASAN" --test-dir "$ASAN" -j "$CTEST_JOBS" &&
     { [ ${#failed[@]} -eq 0 ] || exit 1; }) &
  asan=$!

  stage "build $TSAN (GCC 12, TSan; nice 19, beside the ASan tests)"; t=$SECONDS
  configure "$TSAN" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" \
    -DFIRSTWORK_SOURCE_FLAGS=-O1 -DFIRSTWORK_SANITIZE=thread -DFIRSTWORK_BUILD_BENCH=OFF
  nice -n 19 cmake --build "$TSAN" -j "$JOBS" --target firstworkd firstwork_kube_tests \
    firstwork_http_tests firstwork_sim_tests firstwork_signals_tests firstwork_scenario_tests \
    firstwork_store_thread_tests
  took "build $TSAN" $t

  # Sanitizer builds run on the system allocator (ASan and TSan replace malloc); the daemon the
  # demo and the Dockerfile build runs on jemalloc (cmake/Dependencies.cmake). The core's tests
  # in a plain GCC build check that jemalloc serves malloc there and gives free heap back.
  stage "build $PLAIN (GCC, jemalloc: the core's tests; nice 19, beside the ASan tests)"; t=$SECONDS
  configure "$PLAIN" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" -DFIRSTWORK_BUILD_BENCH=OFF
  nice -n 19 cmake --build "$PLAIN" -j "$JOBS" --target firstwork_core_tests
  took "build $PLAIN" $t

  if ! wait $asan; then failed+=("ctest $ASAN"); fi
  took "ctest $ASAN (from its start)" $t_asan
  check_reports "$ASAN" "ctest $ASAN"

  stage "ctest $TSAN: threaded tests"; t=$SECONDS
  rm -f "$TSAN/ctest.log"
  sanitizer_env "$TSAN"
  # Less the two volume tests (1.6 MB and 10,000-label objects; a 10,000-pod initial list): they
  # add no thread interplay of their own, and TSan makes them miss their deadlines and clock-skew
  # bound (both run in build-asan).
  # Four at a time: the tests are CPU-bound under TSan, and six take no less time (52 s either
  # way on a 2-vCPU EPYC). The deadlines they used to miss at six came from the simulated API
  # server starting 256 worker threads before accepting anything (seconds under TSan); it now
  # starts them as connections need them, and this stage went from 213 s to 51 s.
  run_ctest "$TSAN/ctest.log" "ctest $TSAN units" --test-dir "$TSAN" -j "$TSAN_CTEST_JOBS" \
    -L '^firstwork_(kube|http|sim|signals|scenario|store_thread)_tests$' \
    -E '^(a 1\.6 MB object|an initial list of 10000 pods)'
  # The TSan daemon end to end, driven by the ASan build's end-to-end tests (only the daemon's
  # threads are under test here; -FC: the suite-wide log scan already ran in the ASan stage).
  FIRSTWORK_TEST_FIRSTWORKD=$ROOT/$TSAN/src/app/firstworkd \
    run_ctest "$TSAN/ctest.log" "ctest $TSAN daemon" --test-dir "$ASAN" -j "$CTEST_JOBS" \
    -FC firstwork_test_logs -R '^(firstworkd run watches|Prometheus scraping firstworkd)'
  took "ctest $TSAN" $t
  check_reports "$TSAN" "ctest $TSAN"

  stage "ctest $PLAIN: the core's tests on jemalloc"; t=$SECONDS
  rm -f "$PLAIN/ctest.log"
  run_ctest "$PLAIN/ctest.log" "ctest $PLAIN core" --test-dir "$PLAIN" -j "$CTEST_JOBS" \
    -L '^firstwork_core_tests$'
  took "ctest $PLAIN" $t
fi

took "total" $started
printf '%s\n' "== test.sh timings (wall):" "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  printf '== test.sh FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== test.sh: all passed"
