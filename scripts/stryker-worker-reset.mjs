/**
 * A vitest setup file for mutation testing only (vitest.mutate.config.ts), run after Stryker's own
 * before each test file. scripts/stryker-keep-worker.mjs keeps the worker thread, and with it
 * `globalThis`, from one test file to the next, so what Stryker keeps there is reset as a new
 * thread would have it:
 * - the active mutant: Stryker's setup sets it in a `beforeAll` for mutants activated at run time,
 *   so without this the modules a test file imports would load with the previous run's mutant still
 *   active (found: a registry mutant broke the next run's imports, its tests never ran, and Stryker
 *   scored mutants that fail every test as survivors);
 * - the coverage of the initial (dry) run: Stryker reads each file's coverage from that file, so a
 *   total carried over would count earlier files' hits again (and raise the hit limit).
 */
import { inject } from "vitest"

const ns = globalThis[inject("globalNamespace")]
// a mutant activated statically is set by Stryker's setup for the imports that follow; keep it
if (ns && inject("mode") === "mutant" && inject("mutantActivation") !== "static") ns.activeMutant = undefined
if (ns && inject("mode") === "dry-run") ns.mutantCoverage = undefined
