// Loaded with `node --import`: the process's clock reads as if UTC midnight were
// CLOCK_MIDNIGHT_IN_MS milliseconds after it started (Date only; timers run as they do).
const RealDate = Date
const start = RealDate.now()
const midnight = new RealDate(start).setUTCHours(24, 0, 0, 0)
const offset = midnight - Number(process.env.CLOCK_MIDNIGHT_IN_MS ?? 0) - start
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset)
    else super(...args)
  }
  static now() {
    return RealDate.now() + offset
  }
}
globalThis.Date = ShiftedDate
