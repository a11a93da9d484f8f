/** The devnet demo: every dataset and a round of route quotes, against the embedded devnet. */
import { definePipeline } from "chain-lake"

export default definePipeline({
  name: "demo",
  description: "Every dataset plus one round of route quotes from the embedded devnet.",
  // the one shipped pipeline that may run on simulated data: --indexer-url/--router-url point it elsewhere
  sources: "devnet",
  routePlan: "route-quotes.json",
  schedule: "*/10 * * * *",
  out: "data"
})
