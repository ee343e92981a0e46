# Every dependency is a Debian 12 package; scripts/install-deps.sh installs them.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)              # Asio is header-only: Boost::headers
find_package(CURL REQUIRED)                    # CURL::libcurl
find_package(simdjson REQUIRED)                # simdjson::simdjson
find_package(spdlog REQUIRED)                  # spdlog::spdlog (Debian's libfmt 9)
find_package(prometheus-cpp CONFIG REQUIRED)   # prometheus-cpp::core
find_package(yaml-cpp REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3 REQUIRED)         # JSON writing (API, sim server); decoding uses simdjson
find_package(PkgConfig REQUIRED)
pkg_check_modules(httplib REQUIRED IMPORTED_TARGET cpp-httplib)   # Debian: no CMake config
pkg_check_modules(xxhash REQUIRED IMPORTED_TARGET libxxhash)      # XXH3, inlined (src/core/interned.cpp)
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()

# The heap allocator. jemalloc by default: the decoder and the engine allocate and free a few
# dozen small blocks per event, and jemalloc's per-thread size-class caches serve them faster
# than glibc's malloc (decode + engine 1–14 % more events per CPU-second in
# firstwork_engine_bench, median 4 %) with a lower resident heap after the initial sync
# (bench/README.md, change 30). Sanitizer builds keep the system allocator: ASan and TSan
# replace malloc themselves.
set(FIRSTWORK_ALLOCATOR jemalloc CACHE STRING "Heap allocator: jemalloc or system (the C library's malloc)")
set_property(CACHE FIRSTWORK_ALLOCATOR PROPERTY STRINGS jemalloc system)
set(firstwork_allocator "${FIRSTWORK_ALLOCATOR}")
if(NOT firstwork_sanitize STREQUAL "off" AND firstwork_allocator STREQUAL "jemalloc")
  message(STATUS "firstwork: sanitizer build (${firstwork_sanitize}): the system allocator instead of jemalloc")
  set(firstwork_allocator system)
endif()
if(firstwork_allocator STREQUAL "jemalloc")
  pkg_check_modules(jemalloc REQUIRED IMPORTED_TARGET jemalloc)   # Debian: libjemalloc-dev
elseif(NOT firstwork_allocator STREQUAL "system")
  message(FATAL_ERROR "FIRSTWORK_ALLOCATOR=${FIRSTWORK_ALLOCATOR}: use jemalloc or system")
endif()
