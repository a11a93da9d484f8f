/** Every five minutes: one round of the route-quote sampling plan. */
import { definePipeline } from "chain-lake"

export default definePipeline({
  name: "route-quotes",
  description: "Route quotes sampled by pipelines/route-quotes.json every five minutes.",
  datasets: [],
  routePlan: "route-quotes.json",
  schedule: "*/5 * * * *",
  out: "data"
})
