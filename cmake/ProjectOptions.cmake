# Flags live on an INTERFACE target that every project target links, not globally, so they never
# apply to code we do not own (cpp-best-practices/cmake_template).
add_library(firstwork_options INTERFACE)
add_library(firstwork::options ALIAS firstwork_options)
target_compile_options(firstwork_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  $<$<BOOL:${FIRSTWORK_WARNINGS_AS_ERRORS}>:-Werror>)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 inlines libstdc++'s std::string copies at -O3 (Release) and under the sanitizers into
  # a __builtin_memcpy it then reports as overlapping ("accessing 9223372036854775810 or more
  # bytes ... [-Wrestrict]") for plain `"x" + s` and replace(): a known false positive of that
  # release (seen across projects, e.g. google/googletest#4108). Eleven sites in src/ and tests/
  # hit it; with -Werror a Release build failed.
  target_compile_options(firstwork_options INTERFACE -Wno-restrict)
endif()
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # In a unity build each .cpp is #included by a generated source, so GCC takes it for a header
  # and warns about its classes holding anonymous-namespace types. That can only go wrong when a
  # header is included by several translation units; each .cpp is in exactly one.
  target_compile_options(firstwork_options INTERFACE -Wno-subobject-linkage)
endif()

string(TOLOWER "${FIRSTWORK_SANITIZE}" firstwork_sanitize)
if(firstwork_sanitize MATCHES "^(on|yes|true|1)$")
  set(firstwork_sanitize address)
elseif(firstwork_sanitize MATCHES "^(off|no|false|0|)$")
  set(firstwork_sanitize off)
endif()
if(FIRSTWORK_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "FIRSTWORK_BUILD_FUZZERS needs clang (libFuzzer): "
                        "-DCMAKE_CXX_COMPILER=clang++-14 (packages clang-14, libclang-rt-14-dev)")
  endif()
  if(firstwork_sanitize STREQUAL "thread")
    message(FATAL_ERROR "FIRSTWORK_BUILD_FUZZERS runs under ASan + UBSan; it excludes FIRSTWORK_SANITIZE=thread")
  endif()
  set(firstwork_sanitize address)
endif()

# firstwork_under_test_flags: compile flags for the code under test only, the daemon's sources
# (src/) and the fuzz drivers (fuzz/), which add them to their directories.
set(firstwork_under_test_flags "")
if(firstwork_sanitize STREQUAL "address")
  # ASan in every target. UBSan (reports fatal: -fno-sanitize-recover, so a test or fuzzer that
  # hits UB fails) in the code under test; the runtime in every executable. Not in the tests' and
  # benchmarks' own code: there it doubled the compile of CI's slowest build (a test batch at -O0:
  # 18 s bare, 22 s with ASan, 32 s with ASan + UBSan, 36 s with libFuzzer's coverage too) and
  # checks nothing of the daemon's; every process the end-to-end tests start is all src/.
  target_compile_options(firstwork_options INTERFACE -fsanitize=address
                         -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(firstwork_options INTERFACE -fsanitize=address,undefined)
  list(APPEND firstwork_under_test_flags -fsanitize=undefined)
elseif(firstwork_sanitize STREQUAL "thread")
  target_compile_options(firstwork_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 warns that TSan does not model std::atomic_thread_fence, which Boost.Asio's handler
    # invocation uses (std_fenced_block); the scheduler's mutex already orders what TSan checks.
    # Our own code uses no fences.
    target_compile_options(firstwork_options INTERFACE -Wno-tsan)
  endif()
  target_link_options(firstwork_options INTERFACE -fsanitize=thread)
elseif(NOT firstwork_sanitize STREQUAL "off")
  message(FATAL_ERROR "FIRSTWORK_SANITIZE=${FIRSTWORK_SANITIZE}: use OFF, address or thread")
endif()
if(FIRSTWORK_BUILD_FUZZERS)
  # Coverage feedback for libFuzzer in the code under test (every library of src/ and the fuzz
  # drivers); only fuzz targets link its runtime (-fsanitize=fuzzer), test executables get the
  # sanitizer runtime's no-op hooks.
  list(APPEND firstwork_under_test_flags -fsanitize=fuzzer-no-link)
endif()

# FIRSTWORK_LINKER: the linker the compiler driver uses (-fuse-ld=), e.g. lld; empty: its default.
# scripts/test.sh links its three builds with lld (package lld): an ASan test executable in 0.9 s
# against 3.4 s with GNU ld, and CI's sanitizer build links about 70 executables.
set(FIRSTWORK_LINKER "" CACHE STRING "Linker for -fuse-ld= (e.g. lld); empty: the compiler's default")
if(FIRSTWORK_LINKER)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=${FIRSTWORK_LINKER}" firstwork_linker_works_${FIRSTWORK_LINKER})
  if(NOT firstwork_linker_works_${FIRSTWORK_LINKER})
    message(FATAL_ERROR "FIRSTWORK_LINKER=${FIRSTWORK_LINKER}: the compiler cannot link with "
                        "-fuse-ld=${FIRSTWORK_LINKER} (for lld: apt-get install lld)")
  endif()
  target_link_options(firstwork_options INTERFACE "-fuse-ld=${FIRSTWORK_LINKER}")
endif()
