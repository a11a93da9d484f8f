/** The devnet demo: every dataset and a round of route quotes, against the embedded devnet. */
import { definePipeline } from "../src/pipelines/definePipeline.js"

export default definePipeline({
  name: "demo",
  description: "Every dataset plus one round of route quotes from the embedded devnet.",
  routePlan: "route-quotes.json",
  schedule: "*/10 * * * *",
  out: "data"
})
