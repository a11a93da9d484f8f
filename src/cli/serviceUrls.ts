/**
 * Service URLs and credentials from flags and the environment: `--indexer-url` / `--router-url`
 * (basic auth as `https://user:pass@host`, an API key in the URL's query), `--header "Name:
 * value"` (repeatable) and CHAIN_LAKE_INDEXER_HEADERS / CHAIN_LAKE_ROUTER_HEADERS (one header per
 * line, so that a cron job or a Kubernetes secret keeps keys off the command line). What the
 * commands get is a ServiceUrl: a clean base URL to show, and credentials only the
 * transport sees (src/http/serviceUrl.ts).
 */
import { Options } from "@effect/cli"
import { STATUS_CODES } from "node:http"
import { Console, Effect, Either, Option } from "effect"
import { HEADERS_ENV, plainServiceUrl, serviceUrlFrom, type Service, type ServiceUrl } from "../http/serviceUrl.js"
import { HttpTransport, layerHttpTransport, type TransportFailure } from "../http/transport.js"
import { INDEXER } from "../indexer/endpoints.js"
import { ROUTER_ENDPOINTS } from "../router/endpoints.js"
import { UserError } from "./errors.js"

export const urlOption = (service: Service) =>
  Options.text(`${service}-url`).pipe(
    Options.optional,
    Options.withDescription(
      `the ${service} API's base URL (or CHAIN_LAKE_${service.toUpperCase()}_URL); user:pass@ in it is sent as basic auth`
    )
  )

/** `--devnet`: the embedded devnet's simulated service instead of a real one (never the default: simulated data must be asked for). */
export const devnetOption = (service: Service) =>
  Options.boolean("devnet").pipe(
    Options.withDescription(`use the embedded devnet's simulated ${service} (started in-process) instead of a real one`)
  )

/** What is wrong with how a command names its service (checked before anything is written), if anything. */
export const sourceProblem = (service: Service, url: Option.Option<string>, devnet: boolean): string | undefined =>
  devnet && Option.isSome(url)
    ? `--devnet and --${service}-url name two sources: give one`
    : !devnet && Option.isNone(url) && urlFromEnvironment(service) === undefined
      ? noUrl(service)
      : undefined

/** `--header` of a command that talks to one service, or `--indexer-header` / `--router-header` of one that talks to both. */
export const headerOption = (service: Service, name = "header") =>
  Options.text(name).pipe(
    Options.repeated,
    Options.withDescription(
      `"Name: value" sent with every ${service} request, e.g. "Authorization: Bearer …" (repeatable; also ${HEADERS_ENV[service]}, one per line)`
    )
  )

/** The endpoint `raw` names, with the service's headers from the environment and then from flags; a mistake is a usage error. */
export const serviceEndpoint = (service: Service, raw: string, headerFlags: ReadonlyArray<string> = []) =>
  Either.match(serviceUrlFrom(service, raw, headerFlags), {
    onLeft: (message) => Effect.fail(new UserError({ message, exitCode: 2 })),
    onRight: (endpoint) => Effect.succeed(endpoint)
  })

/** What a status code says about the URL given, when the service answered but not as the service would. */
const answered = (status: number, statusText: string, path: string) =>
  status === 404
    ? `${path} answered 404 Not Found: is this the right service, and the URL its base (no path after it)?`
    : status === 401 || status === 403
      ? `${path} answered ${status} ${statusText}: the service wants credentials (user:pass@ in the URL, --header, or the *_HEADERS environment variable)`
      : undefined

/**
 * A quick check that the service is there, so a wrong URL fails in seconds rather than after the
 * retry budget: "cannot reach" only when nothing answered; otherwise what it answered. A 5xx or
 * 429 passes (the command's retries deal with them).
 */
export const preflight = (service: Service, endpoint: ServiceUrl, path: string) =>
  Effect.flatMap(HttpTransport, (http) => {
    // the clients' own transport (undici, with the endpoint's credentials): fetch would refuse ports browsers block (6000, 6667, …) as "bad port"
    const signal = AbortSignal.timeout(10_000)
    return Effect.tryPromise({
      try: async () => {
        const res = await askTwiceMore(() => http.send({ method: "GET", url: endpoint.baseUrl + path }, signal), signal)
        const body = new TextDecoder().decode(res.bytes)
        // the router's 404s are gRPC-gateway JSON ({"code": 5, …}: "tx not found"): a router answered
        if (service === "router" && res.status === 404 && isGatewayError(body)) return undefined
        // a web page where JSON was due: another site, or a login page in front of the service (the
        // router sampler stored each quote's "not JSON" as data, a round of them)
        // (a 5xx or 429 page of a proxy is HTML too: those pass, for the command's retries)
        if (res.status >= 200 && res.status < 300 && /^\s*</.test(body))
          return `${path} answered ${res.status} with an HTML page, not JSON: is this the ${service}'s URL (or is a login or gateway page in front of it)?`
        // JSON, but not an indexer's status: a node's RPC answers /status too ("malformed response from /status at version" said nothing of the URL)
        if (service === "indexer" && res.status >= 200 && res.status < 300) {
          const status = parsedObject(body)
          if (status !== undefined && !("chain_id" in status && "height" in status))
            return `${path} answered JSON that is not an indexer's status (no chain_id and height${"jsonrpc" in status || "result" in status ? "; it looks like a node's RPC, which answers /status too" : ""}): is this the indexer's URL?`
        }
        return answered(res.status, STATUS_CODES[res.status] ?? "", path)
      },
      catch: (e) => {
        const failure = e as Partial<TransportFailure>
        // it answered, in a form that cannot be read: not a reachability problem
        if (failure.phase === "encoding" || failure.phase === "too-large")
          return new UserError({ message: `${endpoint.baseUrl} (--${service}-url): ${path}: ${failure.reason}` })
        const why = signal.aborted ? "no answer within 10 s" : (failure.code ?? failure.reason ?? String(e))
        return new UserError({
          message: `cannot reach ${endpoint.baseUrl} (--${service}-url): ${why}; check the URL and that the service is up`
        })
      }
    })
  }).pipe(
    Effect.provide(layerHttpTransport(endpoint)),
    Effect.flatMap((problem) =>
      problem ? Effect.fail(new UserError({ message: `${endpoint.baseUrl} (--${service}-url): ${problem}` })) : Effect.void
    )
  )

/** what a flaky gateway or a server under load does to one request: a connection dropped or reset, a body cut short */
const TRANSIENT = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "UND_ERR_CLOSED"])
/**
 * The check's request, asked again (twice more, 0.2 and 0.5 s later) when it failed the way a
 * flaky gateway fails one request: the commands retry those, and a check that did not made a
 * cron run fail with "cannot reach" against a service that was up. A refused connection or an
 * unknown host is answered at once.
 */
const askTwiceMore = async <A>(ask: () => Promise<A>, signal: AbortSignal): Promise<A> => {
  for (const pause of [200, 500]) {
    try {
      return await ask()
    } catch (e) {
      const failure = e as Partial<TransportFailure>
      if (signal.aborted || !(failure.phase === "body" || (failure.code !== undefined && TRANSIENT.has(failure.code)))) throw e
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
  return ask()
}

/** the body as a JSON object, or undefined (not JSON, or not an object) */
const parsedObject = (body: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(body)
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

const isGatewayError = (body: string): boolean => {
  const j = parsedObject(body)
  return typeof j?.code === "number" && typeof j.message === "string"
}

const PREFLIGHT_PATH: Record<Service, string> = { indexer: INDEXER.status.path(), router: ROUTER_ENDPOINTS.status.path }

/** What a command that needs a service's URL says without one. */
export const noUrl = (service: Service) =>
  `no --${service}-url: give the ${service}'s URL (or set CHAIN_LAKE_${service.toUpperCase()}_URL); --devnet uses the embedded devnet's simulated chain instead`

/** The service's URL from the environment (CHAIN_LAKE_INDEXER_URL / CHAIN_LAKE_ROUTER_URL); an empty value names nothing. */
export const urlFromEnvironment = (service: Service): string | undefined =>
  process.env[`CHAIN_LAKE_${service.toUpperCase()}_URL`] || undefined

/**
 * The endpoint a flag (or the environment) names, checked and probed; else the embedded devnet's,
 * started for this command, where `devnet` allows it. Without it a command that writes data
 * refuses: simulated data must never land in a real lake because a flag was forgotten.
 */
export const endpointOrDevnet = (
  service: Service,
  value: Option.Option<string>,
  headers: ReadonlyArray<string>,
  purpose: string,
  devnet: { seed: number; blocks: number } | false = { seed: 1, blocks: 10 }
) =>
  Effect.gen(function* () {
    // --devnet is asked for by name: CHAIN_LAKE_…_URL in the environment does not override it
    const url = Option.getOrUndefined(value) ?? (devnet === false ? urlFromEnvironment(service) : undefined)
    if (url !== undefined) {
      const endpoint = yield* serviceEndpoint(service, url, headers)
      yield* preflight(service, endpoint, PREFLIGHT_PATH[service])
      return endpoint
    }
    if (devnet === false) return yield* new UserError({ message: noUrl(service), exitCode: 2 })
    const started = yield* Effect.acquireRelease(
      Effect.promise(async () => (await import("../devnet/index.js")).startDevnet(devnet)),
      (d) => Effect.promise(() => d.stop())
    )
    const devnetUrl = service === "indexer" ? started.indexerUrl : started.routerUrl
    yield* Console.error(
      `${purpose} the embedded devnet ${service === "indexer" ? `(seed ${devnet.seed}, ${devnet.blocks} blocks) ` : ""}at ${devnetUrl}: simulated data`
    )
    return plainServiceUrl(devnetUrl)
  })

/** A checked endpoint, probed (for commands where the URL is required). */
export const probedEndpoint = (service: Service, raw: string, headers: ReadonlyArray<string>) =>
  Effect.tap(serviceEndpoint(service, raw, headers), (endpoint) => preflight(service, endpoint, PREFLIGHT_PATH[service]))
