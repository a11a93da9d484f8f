/** The undici files src/http/undiciAgent.ts loads in place of undici's index: their exports, as the index re-exports them. */
declare module "undici/lib/dispatcher/agent.js" {
  import { Agent } from "undici"
  export default Agent
}
declare module "undici/lib/dispatcher/dispatcher.js" {
  import { Dispatcher } from "undici"
  export default Dispatcher
}
declare module "undici/lib/api/index.js" {
  const api: Record<string, unknown>
  export default api
}
