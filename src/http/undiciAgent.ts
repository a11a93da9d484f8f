/**
 * undici's Agent with its request API, and nothing else of undici: its index also loads fetch,
 * WebSocket, EventSource, the mock and cache layers and the proxies, none of which the transport
 * uses, and evaluating them cost every process and shard worker ~25 ms of its start (a worker ready
 * in ~150 ms instead of ~175, Node 24 with the compile cache, 2 cores). The index adds the request
 * API to every dispatcher the same way (Object.assign on Dispatcher's prototype); undici is pinned
 * to one version, whose files these paths name.
 */
import Agent from "undici/lib/dispatcher/agent.js"
import Dispatcher from "undici/lib/dispatcher/dispatcher.js"
import api from "undici/lib/api/index.js"

Object.assign(Dispatcher.prototype, api)

export { Agent }
