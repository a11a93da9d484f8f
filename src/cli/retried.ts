/** What a command says of the requests it asked again after a transient failure (http/Retries.ts counts them). */
import { Effect } from "effect"
import { requestsCounted, retriedTotal, retriesText, type RetriesService, type RetryCounts } from "../http/Retries.js"

/**
 * "12 requests were asked again after a transient failure (503 ×7, 429 ×5)", then `on429` where
 * some were 429s: a server that limits the rate slows the command down.
 */
export const retriedLine = (retried: RetryCounts, on429?: string) =>
  `${requestsCounted(retriedTotal(retried))} ${retriedTotal(retried) === 1 ? "was" : "were"} asked again after a transient failure (${retriesText(retried)})${
    on429 && (retried["429"] ?? 0) > 0 ? `: ${on429}` : ""
  }`

/** Says retriedLine on stderr as the scope closes, however the command ends, where any request was asked again. */
export const sayRetriedAtEnd = (retries: RetriesService) =>
  Effect.addFinalizer(() =>
    Effect.sync(() => {
      const counts = retries.counts()
      if (retriedTotal(counts) > 0) process.stderr.write(`${retriedLine(counts)}\n`)
    })
  )
