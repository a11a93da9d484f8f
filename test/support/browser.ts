/** Opens a local HTML file in Debian's headless Chromium (never a downloaded browser). */
import { existsSync } from "node:fs"

export const CHROMIUM = "/usr/bin/chromium"
export const haveChromium = existsSync(CHROMIUM)

export interface RenderedPage {
  readonly errors: ReadonlyArray<string>
  /** per figure id: svg width, height, number of drawn marks, and by how many pixels the chart (legends included) passes its card's right edge */
  readonly charts: ReadonlyArray<{
    readonly id: string
    readonly width: number
    readonly height: number
    readonly marks: number
    readonly overflow: number
  }>
}

/** Renders `path` in a window `width` CSS pixels wide (Playwright's default: 1280). */
export const renderInChromium = async (path: string, width = 1280): Promise<RenderedPage> => {
  const { chromium } = await import("playwright-core")
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  try {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    const errors: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text())
    })
    page.on("pageerror", (e) => errors.push(e.message))
    await page.goto("file://" + path)
    const charts = []
    for (const figure of await page.locator("figure.chart").all()) {
      const id = (await figure.getAttribute("id")) ?? "?"
      const box = await figure.locator("svg").boundingBox()
      const marks = await figure.locator("svg path, svg rect, svg line").count()
      const overflow = await figure.evaluate((el) => {
        const svg = el.querySelector("svg")
        if (!svg) return 0
        const card = el.getBoundingClientRect()
        const style = (
          globalThis as unknown as { getComputedStyle: (e: unknown) => { paddingRight: string; borderRightWidth: string } }
        ).getComputedStyle(el)
        const inner = card.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth)
        // every drawn element, legends too: a legend may stick out of an svg that fits
        const right = Math.max(
          svg.getBoundingClientRect().right,
          ...[...svg.querySelectorAll("g")].map((g) => g.getBoundingClientRect().right)
        )
        return Math.max(0, right - inner)
      })
      charts.push({ id, width: box?.width ?? 0, height: box?.height ?? 0, marks, overflow })
    }
    return { errors, charts }
  } finally {
    await browser.close()
  }
}
