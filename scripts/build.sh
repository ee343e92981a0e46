#!/usr/bin/env bash
# Configures and builds firstwork into ${BUILD_DIR:-build} (Release-with-debug-info, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DFIRSTWORK_WARNINGS_AS_ERRORS=ON "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
