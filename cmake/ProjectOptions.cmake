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

if(firstwork_sanitize STREQUAL "address")
  # UBSan reports are fatal (-fno-sanitize-recover), so a test or fuzzer that hits UB fails.
  target_compile_options(firstwork_options INTERFACE -fsanitize=address,undefined
                         -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(firstwork_options INTERFACE -fsanitize=address,undefined)
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
  # Coverage feedback for libFuzzer in every project library; only fuzz targets link its runtime
  # (-fsanitize=fuzzer), test executables get the sanitizer runtime's no-op hooks.
  target_compile_options(firstwork_options INTERFACE -fsanitize=fuzzer-no-link)
endif()
