#!/usr/bin/env bash
# Runs on the lent machine: the multi-dataset part of the export bench for the working tree against
# the sources of another commit (.dev/base/src, packed by `BASE=<commit> bash bench/device/pack.sh`),
# alternating, ROUNDS times each (default 2), pinned to each of CORES (default 16) with WORKERS
# (default 7,9), one repeat per invocation, with the request timelines (BENCH_TRACE); the output goes
# to $OUT/ab.txt. A lent host's runs spread ±15% from one to the next, and hosts differ: compare
# within one call. About 50 s per invocation at 16 cores:
#   run(command: "bash bench/device/ab.sh", carry: [".dev"], timeout_s: 330)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${OUT:-/tmp}
mkdir -p "$out"
[ -d .dev/base/src ] || { echo "no .dev/base/src: pack with BASE=<commit> bash bench/device/pack.sh" >&2; exit 2; }
xz -dc .dev/node.xz >/tmp/node && chmod +x /tmp/node
[ -d node_modules ] || tar -xJf .dev/modules.tar.xz
export PATH="/tmp:$PATH" NODE_COMPILE_CACHE=/tmp/node-compile-cache
echo "node $(node --version), $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo)" | tee "$out/ab.txt"
# the base: this tree with the other commit's sources (its dev bundle of the workers made apart)
rm -rf /tmp/base && mkdir -p /tmp/base
tar --exclude=./node_modules --exclude=./.dev --exclude=./.git --exclude=./dist -cf - . | tar -xf - -C /tmp/base
ln -s "$root/node_modules" /tmp/base/node_modules && rm -rf /tmp/base/src && cp -a .dev/base/src /tmp/base/src
bench() {
  (cd "$1" && BENCH_TRACE=1 BENCH_PARTS=multi BENCH_MULTI_SERVERS=replay BENCH_REPEAT=1 BENCH_CORES=$2 BENCH_WORKERS=${WORKERS:-7,9} \
    node --import tsx bench/export-bench.ts 2>&1 | tee -a "$out/ab.txt")
}
cores=${CORES:-16}
for n in ${cores//,/ }; do
  for i in $(seq "${ROUNDS:-2}"); do
    echo "=== base ($(cat .dev/base/commit)), $n cores, round $i" | tee -a "$out/ab.txt"; bench /tmp/base "$n"
    echo "=== this tree, $n cores, round $i" | tee -a "$out/ab.txt"; bench "$root" "$n"
  done
done
