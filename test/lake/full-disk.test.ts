/**
 * A real full disk (ENOSPC), not a simulated one: the CLI runs in a private mount namespace whose
 * output folder is a tmpfs of a few pages. `run --schedule` reports every failed run and tries
 * again at the next tick, each run report is written whole, an `export` on the same full disk is
 * one line and exit 1, and nothing committed is lost or damaged; once space is freed (the tmpfs
 * grown) a rerun completes the lake exactly.
 *
 * It needs `unshare` and `mount` (util-linux) and the right to make a mount namespace: root, or an
 * unprivileged user namespace. Where neither is allowed the test says so and is skipped.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN } from "../support/cli.js"
import { expectManifestsTrue, filesUnder } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-full-disk-")

/** How this process may make a mount namespace with a tmpfs in it: `unshare` flags, or undefined. */
const namespaceFlags = (): Array<string> | undefined => {
  const probe = tmp()
  for (const flags of [["--mount"], ["--user", "--map-root-user", "--mount"]]) {
    const r = spawnSync("unshare", [...flags, "sh", "-c", `mount -t tmpfs -o size=64k tmpfs '${probe}'`], { stdio: "ignore" })
    if (r.status === 0) return flags
  }
  return undefined
}
const unshare = namespaceFlags()

let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 61, blocks: 150 })
})
afterAll(async () => {
  await devnet?.stop()
  removeTmpDirs()
})

/** `q` as one shell word. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

describe.skipIf(!unshare)(
  `a full disk (ENOSPC, a tmpfs of 64 kB in a mount namespace${unshare ? "" : ": not allowed here, skipped"})`,
  () => {
    it("run --schedule reports each failed run whole and tries again; export is one line and exit 1; nothing committed is damaged; with space again a rerun completes the lake exactly", async () => {
      const work = tmp()
      const out = join(work, "lake")
      const full = join(work, "lake-when-full")
      const final = join(work, "lake-final")
      mkdirSync(out)
      const pipeline = join(work, "every-second.mts")
      writeFileSync(
        pipeline,
        `import { definePipeline } from ${JSON.stringify(resolve("src/pipelines/definePipeline.ts"))}\nexport default definePipeline({ name: "every-second", description: "test", datasets: ["blocks", "txs"], schedule: "* * * * * *" })\n`
      )
      const urls = `--indexer-url ${q(devnet.indexerUrl)} --router-url ${q(devnet.routerUrl)}`
      const cli = `${q(process.execPath)} ${q(BIN)}`
      // each step's output in files of its own; the lake is copied out before the namespace (and its tmpfs) goes
      const step = (name: string, command: string) =>
        `${command} > ${q(join(work, `${name}.out`))} 2> ${q(join(work, `${name}.err`))}; echo $? > ${q(join(work, `${name}.code`))}`
      const script = [
        "set -u",
        `mount -t tmpfs -o size=64k tmpfs ${q(out)} || exit 97`,
        step("schedule", `${cli} run ${q(pipeline)} --schedule --max-runs 2 --out ${q(out)} ${urls}`),
        step("export", `${cli} export --datasets blocks,txs --out ${q(out)} --indexer-url ${q(devnet.indexerUrl)}`),
        // not one byte free: the run's lock file is created, and then cannot be written
        `dd if=/dev/zero of=${q(join(out, "filler"))} bs=4k 2> /dev/null`,
        step("no-room", `${cli} run ${q(pipeline)} --once --out ${q(out)} ${urls}`),
        `rm ${q(join(out, "filler"))}`,
        `cp -a ${q(out)} ${q(full)}`,
        // space again: the same folder, grown
        `mount -o remount,size=64m ${q(out)} || exit 98`,
        step("rerun", `${cli} run ${q(pipeline)} --once --out ${q(out)} ${urls}`),
        step("verify", `${cli} verify --data ${q(out)}`),
        `cp -a ${q(out)} ${q(final)}`
      ].join("\n")
      // not spawnSync: the devnet answering the CLI lives in this process's event loop
      const r = await new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn("unshare", [...unshare!, "sh", "-c", script], {
          env: { ...process.env, NO_COLOR: "1" },
          stdio: ["ignore", "ignore", "pipe"]
        })
        let stderr = ""
        child.stderr.on("data", (d) => (stderr += d))
        child.on("close", (code) => done({ code, stderr }))
      })
      expect(r.code, r.stderr).toBe(0)
      const read = (name: string) => ({
        code: Number(readFileSync(join(work, `${name}.code`), "utf8")),
        stdout: readFileSync(join(work, `${name}.out`), "utf8"),
        stderr: readFileSync(join(work, `${name}.err`), "utf8")
      })

      // the scheduler: both runs failed on the full disk, each reported in one line; the command exits 1 naming them
      const schedule = read("schedule")
      expect(schedule.code, schedule.stderr).toBe(1)
      const lines = schedule.stdout.trim().split("\n")
      expect(lines, schedule.stdout).toHaveLength(2)
      // where the disk ran out differs from run to run (a staged file, a lock, a manifest), the cause does not
      for (const line of lines) expect(line).toMatch(/every-second: FAILED — .*no space left on device/i)
      expect(schedule.stderr.trim().split("\n").at(-1)).toBe(
        "chain-lake: error: 2 of 2 runs of every-second failed (see the lines above, and the reports in _runs/)"
      )
      for (const text of [schedule.stdout, schedule.stderr]) expect(text).not.toMatch(/\n\s+at /)

      // a plain export on the same full disk: one line, exit 1
      const exported = read("export")
      expect(exported.code, exported.stderr).toBe(1)
      expect(
        exported.stderr
          .trim()
          .split("\n")
          .filter((l) => l.startsWith("chain-lake: error:"))
      ).toHaveLength(1)
      expect(exported.stderr).toMatch(/no space left on device/i)
      expect(exported.stderr).not.toMatch(/\n\s+at /)

      // on a disk with no byte free the run fails at its lock, which it does not leave behind empty
      const noRoom = read("no-room")
      expect(noRoom.code).toBe(1)
      expect(noRoom.stderr.trim()).toBe(
        `chain-lake: error: cannot take the run lock ${join(out, ".chain-lake.lock")}: ENOSPC: no space left on device, write`
      )

      // what the full disk held: every run report whole, every manifest true, no staged leftovers
      const reports = readdirSync(join(full, "_runs"))
      expect(reports.filter((f) => f.includes("pipeline-every-second"))).toHaveLength(2)
      // a pipeline run's report, or the export's where it committed a dataset before the disk ran out (which gets there first is a race)
      for (const f of reports.filter((f) => f.endsWith(".json"))) {
        const report = JSON.parse(readFileSync(join(full, "_runs", f), "utf8"))
        if (f.endsWith("-failed.json")) {
          expect(report.failed).toMatch(/no space left on device/i)
          expect(report.committed.length, f).toBeGreaterThan(0)
          continue
        }
        expect(report.ok, f).toBe(false)
        expect(report.error).toMatch(/no space left on device/i)
      }
      expect(
        reports.filter((f) => !f.endsWith(".json")),
        "partial reports left behind"
      ).toEqual([])
      await expectManifestsTrue(full, ["blocks", "txs"], { mayBeEmpty: true })
      // nothing half-made left behind: no staged file, no lock file (an empty one would hold up the next writer)
      expect(
        filesUnder(full).filter((f) => f.startsWith(".chain-lake/staging/") || f.endsWith(".lock")),
        "left behind"
      ).toEqual([])

      // with space again the next run completes the lake exactly, and verify agrees
      const rerun = read("rerun")
      expect(rerun.code, rerun.stderr).toBe(0)
      expect(rerun.stdout).toMatch(/every-second: ok — blocks \+\d+, txs \+\d+/)
      expect(read("verify").code, read("verify").stdout).toBe(0)
      await expectLakeMatchesChain(final, devnet, ["blocks", "txs"])
    }, 120_000)
  }
)
