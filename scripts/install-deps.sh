#!/usr/bin/env bash
# Installs every build, test and run dependency that is missing, from Debian 12 packages only.
# Idempotent: when everything is present it does nothing (and needs no network).
set -euo pipefail
pkgs=(g++ cmake ninja-build pkg-config git ca-certificates
      prometheus-cpp-dev libcpp-httplib-dev libcurl4-openssl-dev libsimdjson-dev libboost-dev
      libspdlog-dev catch2 libyaml-cpp-dev libsqlite3-dev libssl-dev nlohmann-json3-dev libjemalloc-dev
      libxxhash-dev
      prometheus openssl python3 nghttp2-proxy
      clang-14 libclang-rt-14-dev lld)   # scripts/test.sh: the sanitizer + libFuzzer build; linking
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# kubectl (for `kubectl kustomize deploy/`): Debian's kubernetes-client, unless a kubectl exists.
if ! command -v kubectl >/dev/null 2>&1; then missing+=(kubernetes-client); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "install-deps: run as root to install packages" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The prometheus package would start a system service on :9090; tests start their own.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
