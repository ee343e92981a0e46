#!/usr/bin/env bash
# Grows the corpus of one or all fuzz targets (on demand; CI only replays and fuzzes briefly).
#
#   scripts/fuzz.sh <target>|all [seconds per target, default 600]
#
# Builds the clang ASan+UBSan+libFuzzer configuration into ${FUZZ_BUILD_DIR:-build-fuzz}, seeds
# from fuzz/make_seeds.py, fuzzes with the kept working corpus of earlier runs, then minimises
# everything into fuzz/corpus/<target>/ (-merge=1). The log of each run is
# ${FUZZ_BUILD_DIR}/logs/<target>.log; a crash leaves its input in ${FUZZ_BUILD_DIR}/artifacts/
# and makes this script fail. Targets: watch_stream object_decoders kubeconfig config rfc3339
# quantity promql scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL=(watch_stream object_decoders kubeconfig config rfc3339 quantity promql scenario)
[ $# -ge 1 ] || { sed -n '2,11p' "$0"; exit 2; }
if [ "$1" = all ]; then targets=("${ALL[@]}"); else targets=("$1"); fi
seconds=${2:-600}
dir=${FUZZ_BUILD_DIR:-build-fuzz}

CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DFIRSTWORK_WARNINGS_AS_ERRORS=ON \
  -DFIRSTWORK_BUILD_FUZZERS=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  >/dev/null
cmake --build "$dir" -j 2 --target "${targets[@]/#/fuzz_}"
rm -rf "$dir/seeds"
python3 fuzz/make_seeds.py "$dir/seeds"
mkdir -p "$dir/logs" "$dir/artifacts"

for t in "${targets[@]}"; do
  bin="$dir/fuzz/fuzz_$t"
  work="$dir/work/$t"
  mkdir -p "$work" "$dir/seeds/$t" "fuzz/corpus/$t"
  echo "fuzz: $t for ${seconds}s (log $dir/logs/$t.log)"
  "$bin" "$work" "fuzz/corpus/$t" "$dir/seeds/$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" \
    >"$dir/logs/$t.log" 2>&1 || { tail -40 "$dir/logs/$t.log"; exit 1; }
  grep -aE '^#[0-9]+[[:space:]]+(INITED|DONE)' "$dir/logs/$t.log" | sed "s/^/fuzz: $t /"
  # Minimise: keep only inputs that add coverage, into a fresh directory.
  rm -rf "fuzz/corpus/$t.new" && mkdir "fuzz/corpus/$t.new"
  "$bin" -merge=1 "fuzz/corpus/$t.new" "fuzz/corpus/$t" "$work" "$dir/seeds/$t" >"$dir/logs/$t.merge.log" 2>&1
  rm -rf "fuzz/corpus/$t" && mv "fuzz/corpus/$t.new" "fuzz/corpus/$t"
  echo "fuzz: $t corpus $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk "fuzz/corpus/$t" | cut -f1) KB"
done
