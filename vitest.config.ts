import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // the Skip Go SDK conformance test has its own dependencies: `npm run test:conformance`
    // the benches' smoke runs (about half a minute) are a step of their own in .ci/run, outside the default suite's time: `npm run test:bench-smoke`
    exclude: [
      "**/node_modules/**",
      ...(process.env.CHAIN_LAKE_CONFORMANCE ? [] : ["test/conformance/**"]),
      ...(process.env.CHAIN_LAKE_BENCH_SMOKE ? [] : ["test/bench-smoke.test.ts"])
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // two test files at once even on 2 cores (vitest's default there is one): most tests wait on
    // child processes and loopback HTTP, so the suite takes 7 minutes instead of 12 on CI's 2 cores
    poolOptions: { forks: { maxForks: Math.max(2, availableParallelism() - 1) } },
    // the JSON report is what .ci/run reads for its closing "Tests: N passed, N failed" line
    reporters: ["default", "json"],
    outputFile: { json: ".test-results/vitest.json" }
  }
})
