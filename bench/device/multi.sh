#!/usr/bin/env bash
# Runs on the lent machine (bench/device/pack.sh says how): the multi-dataset part of the export
# bench pinned to 16, 4 and 2 cores (CORES="16,4,2"), with the shard worker counts each suits;
# against the replay only, one repeat (SERVERS, REPEAT, WORKERS to change: about a minute per core count);
# the output goes to $OUT/multi.txt. Issue 36's goal: on 8 or more cores, chain-lake ≥ 6× the
# sequential walk and ≤ 1.3× the plain concurrent fetch.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp}
xz -dc .dev/node.xz >/tmp/node && chmod +x /tmp/node
[ -d node_modules ] || tar -xJf .dev/modules.tar.xz
export PATH="/tmp:$PATH" NODE_COMPILE_CACHE=/tmp/node-compile-cache
echo "node $(node --version), $(nproc) cores" | tee "$out/multi.txt"
cores=${CORES:-16,4,2}
for n in ${cores//,/ }; do
  case $n in 2) workers=0,1 ;; 4) workers=0,3 ;; *) workers=0,$((n / 2 - 1)),$((n * 3 / 4 - 1)) ;; esac
  workers=${WORKERS:-$workers}
  BENCH_PARTS=multi BENCH_MULTI_SERVERS=${SERVERS:-replay} BENCH_REPEAT=${REPEAT:-1} BENCH_CORES=$n BENCH_WORKERS=$workers node --import tsx bench/export-bench.ts 2>&1 | tee -a "$out/multi.txt"
done
