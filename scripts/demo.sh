#!/usr/bin/env bash
# The run command: installs what is missing, builds, and runs the daemon on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
exec ./build/src/app/firstworkd demo "$@"
