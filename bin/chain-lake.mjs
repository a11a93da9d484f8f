#!/usr/bin/env -S node --max-semi-space-size=32
// A larger young generation (32 MB semi-spaces, V8's default is 16): an export allocates a page's
// parse tree and rows and drops them a page later; with the default, scavenges copied the live
// page again and again (GC 7.5 → 4 µs per exported tx, bench/RESULTS.md). npm scripts pass it too.
// Runs the TypeScript CLI directly through tsx's loader, so a fresh clone needs no build step.
import { register } from "tsx/esm/api"
register()
await import("../src/cli/main.ts")
