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
if(TARGET yaml-cpp AND NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
