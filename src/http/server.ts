// The node:http server in front of yoga: before GraphQL runs it applies the body limits, the receive
// timeout and admission control and answers `/`, `/health` and `/ready`; it listens, and drains on the
// way out (drain.ts). What answers the requests it lets through is given to it (the gateway: gateway.ts),
// and every answer it makes leaves through the ending (answer.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type LISTEN_SETTINGS, listenOn } from './listen.js';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { SettingsOf } from '../settings.js';
import type { RequestBounds } from '../upstream/source.js';
import {
  GRAPHQL_ENDPOINT,
  SECURITY_HEADERS,
  TOOL_HEADER,
  TOOL_NAME,
  TRACE_HEADER,
  asksForTrace,
  streamsSubscription,
  wantsGraphiQLPage,
} from '../http-headers.js';
import { type RequestState, type Slot, newRequestState } from '../request-state.js';
import type { Answer } from '../graphql/answered.js';
import type { Ending } from './answer.js';
import { LIVE_DEFAULTS, type LIVE_SETTINGS } from '../live/hub.js';
import { type ADMISSION_SETTINGS, createAdmission } from './admission.js';
import { createKnownKeys } from './known-keys.js';
import { type DELIVERY_SETTINGS, PacedResponse, watchDeliveries } from './delivery.js';
import { InFlight, drainServer, type DrainOptions, type ServingPhase } from './drain.js';
import { parsedLater, readOperation } from './operation-type.js';
import {
  DRAINING,
  NOT_STREAMABLE,
  OVERLOADED,
  bodyRefusal,
  bodyTooLarge,
  rawRefusal,
  receivedTooSlowly,
  refuse,
  type RefusalConfig,
} from './refusals.js';
import { createOpenStreams } from './streams.js';
import { type RECEIVE_SETTINGS, readBody } from './receive.js';
import { VERSION } from '../version.js';
import { type WebHandler, webAnswerOf } from './web-answer.js';

/** What the HTTP server is configured with (config.ts reads each from the environment). */
export type HttpConfig = RefusalConfig &
  SettingsOf<typeof LISTEN_SETTINGS> &
  SettingsOf<typeof DELIVERY_SETTINGS> &
  SettingsOf<typeof ADMISSION_SETTINGS> &
  Pick<SettingsOf<typeof RECEIVE_SETTINGS>, 'receiveTimeoutMs'> &
  Pick<RequestBounds, 'requestDeadlineMs'> & {
    /** GraphiQL is served: its page is answered here, before admission. */
    graphiql: boolean;
    /** X-Gateway-Trace is heard (TRACE; graphql/plugins/use-request-trace.ts). */
    traces?: boolean;
    limits: Pick<SettingsOf<typeof RECEIVE_SETTINGS>, 'bodyBytes'>;
    /** How long a key the upstream accepted keeps its requests in the known line (KEY_RECHECK_S; admission.ts). */
    knownKeyMs: number;
    live?: Partial<Pick<SettingsOf<typeof LIVE_SETTINGS>, 'maxStreams' | 'maxLifetimeMs'>>;
    drain: DrainOptions;
    /**
     * The MCP endpoint (mcp/http.ts), answered before admission: it is no work of its own, each tool call
     * it makes is a GraphQL request that waits in line as any other.
     */
    mcpEndpoint?: { path: string; handle: WebHandler };
  };

/** What /ready reports besides its verdict, without deciding it: the upstream breaker, the store's connection. */
export type ReadinessReport = Record<string, string>;

export interface HttpServer {
  /** Base URL, e.g. http://127.0.0.1:4000. */
  url: string;
  server: Server;
  /** `starting` until listening, `serving`, then `draining` once drain() was called (/ready answers 503). */
  readonly phase: ServingPhase;
  /**
   * Turns /ready to 503 and closes the open event streams at once (their clients subscribe again
   * elsewhere; a new one is answered 503), serves on for DRAIN_DELAY_MS, stops accepting (idle
   * keep-alive sockets closed), waits for what is in flight up to DRAIN_TIMEOUT_MS and ends what is left.
   */
  drain(): Promise<void>;
  /** Ends every connection at once. */
  close(): Promise<void>;
  /** Requests being worked on and waiting in line now (metrics). */
  load(): { active: number; queued: number };
}

/** What answers a request the admission lets through, with its state: the answer, which the ending sends. */
export type Answerer = (req: IncomingMessage, res: ServerResponse, state: RequestState) => Answer | Promise<Answer>;

/**
 * Listens on config.host and config.port; `answer` answers what the admission lets through, with the
 * request's state (request-state.ts), and `ending` sends it; `/ready` and `/health` are answered here.
 */
export async function serveHttp(
  answer: Answerer,
  ending: Ending,
  config: HttpConfig,
  logger: Logger,
  report: () => ReadinessReport = () => ({}),
  /** Each request admission control turns away (metrics: gateway_requests_refused_total). */
  onRefused?: (reason: 'full' | 'waited') => void,
): Promise<HttpServer> {
  let phase: ServingPhase = 'starting';
  /** Answers the request and sends its answer; a fault of the gateway's own is a 500 that names no detail. */
  const handle = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    const sent = (made: Answer): void => ending.finish(req, res, state, made);
    const failed = (error: unknown): void => {
      logger.error({ err: error }, 'answering a request failed');
      state.slot?.free(false);
      if (!res.headersSent) res.writeHead(500, { 'content-length': '0', ...SECURITY_HEADERS });
      res.end();
    };
    try {
      const made = answer(req, res, state);
      if (made instanceof Promise) made.then(sent, failed);
      else sent(made);
    } catch (error) {
      failed(error);
    }
  };
  const inFlight = new InFlight();
  const admission = createAdmission({
    maxActive: config.maxActiveRequests,
    maxQueued: config.maxQueuedRequests,
    maxWaitMs: config.requestDeadlineMs,
    reject: (req, res, reason) => {
      // Operators need to see the gateway shedding load: one line per refused request.
      logger.warn(
        { status: 503, reason: reason === 'full' ? 'line full' : 'waited too long', active: admission.active, queued: admission.queued },
        'request refused: overloaded',
      );
      onRefused?.(reason);
      refuse(req, res, OVERLOADED, config);
    },
  });

  // An event stream (a subscription) is not a request being worked on: it waits on the live pollers
  // (live/hub.ts) for as long as it stays open, so it takes no MAX_ACTIVE_REQUESTS slot. Streams have
  // their own bound instead, LIVE_MAX_STREAMS, and none waits in line for one. Each is closed (its
  // connection, never with `complete`: streams.ts) LIVE_MAX_LIFETIME_S after it opened, and when drain starts.
  const openStreams = createOpenStreams(config.live?.maxLifetimeMs ?? LIVE_DEFAULTS.maxLifetimeMs);
  const streams = createAdmission({
    maxActive: config.live?.maxStreams ?? LIVE_DEFAULTS.maxStreams,
    maxQueued: 0,
    maxWaitMs: config.requestDeadlineMs,
    reject: (req, res) => {
      logger.warn({ status: 503, reason: 'streams full', streams: streams.active }, 'request refused: overloaded');
      refuse(req, res, OVERLOADED, config);
    },
  });

  // A request takes a place in line (and later a slot) only once its body is here: a client that
  // sends slowly holds its own socket, never one of the MAX_ACTIVE_REQUESTS slots. node cuts a
  // request whose headers and body have not all arrived within the receive timeout (408); a request
  // whose body is complete is out of node's reach, so its wait in line is not counted against it.
  // node checks every connectionsCheckingInterval, so the cut comes within a second of the timeout.
  const receiveTimeoutMs = config.receiveTimeoutMs;
  const server = createServer({
    ServerResponse: PacedResponse,
    headersTimeout: receiveTimeoutMs,
    requestTimeout: receiveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, receiveTimeoutMs),
  });
  // The response in flight on each connection: the 408 of a request whose body is late goes through
  // it, with CORS and the security headers, as the gateway's other refusals do.
  const responses = new WeakMap<Duplex, ServerResponse>();
  // A draining gateway opens no stream: its client gets a 503 and subscribes again, on another replica.
  const admitStream = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    if (phase === 'draining') return refuse(req, res, DRAINING, config);
    streams.admit(req, res, (admitted, stream) => {
      openStreams.track(stream);
      state.keyKnown = state.key !== null && knownKeys.knows(state.key);
      state.slot = STREAM_SLOT;
      handle(admitted, stream, state);
    });
  };
  // A request's slot is released when its answer is produced (yoga says so: use-work.ts), or when it
  // closes. One whose key the upstream accepted lately waits in the known line (admission.ts).
  const knownKeys = createKnownKeys(config.knownKeyMs);
  const admitRequest = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    const { key } = state;
    // Set once admit returns: a request that starts before (a free slot) did not wait.
    let waited = false;
    admission.admit(
      req,
      res,
      (admitted, response, release) => {
        // Known when it starts: a request of the same key answered while it waited counts. One that did
        // not wait is known as it was on arrival (its lane), looked up a moment ago.
        state.keyKnown = key !== null && (waited ? knownKeys.knows(key) : state.lane === 'known');
        state.admittedAt = performance.now();
        // A data property, not a getter (docs/performance.md#garbage).
        const slot = {
          stream: false,
          free(keyAccepted: boolean) {
            if (keyAccepted && key !== null) knownKeys.remember(key);
            release();
          },
          becomeStream(keyAccepted = false) {
            if (keyAccepted && key !== null) knownKeys.remember(key);
            if (slot.stream) return true;
            if (phase === 'draining' || response.destroyed) return false;
            if (streams.enter(response) === null) {
              logger.warn({ status: 503, reason: 'streams full', streams: streams.active }, 'request refused: overloaded');
              return false;
            }
            slot.stream = true;
            release();
            openStreams.track(response);
            return true;
          },
        };
        state.slot = slot;
        handle(admitted, response, state);
      },
      state.lane,
      key ?? '',
    );
    waited = true;
  };
  // The request's state, made once its body is here: its key read, its operation's kind, its lane.
  const arrivingState = (req: IncomingMessage): RequestState => {
    const { type, parsedBody, parseLater } = readOperation(req);
    const tool = req.headers[TOOL_HEADER];
    const state = newRequestState(req.headers.authorization, {
      operationType: type,
      // A body known without parsing it (seen lately) is parsed only if something runs its operation.
      ...(parsedBody !== undefined ? { body: () => parsedBody } : parseLater ? { body: () => parsedLater(req) } : {}),
      // A subscription's events carry no trace: only a request answered once gets one.
      traced: config.traces === true && type !== 'subscription' && asksForTrace(req.headers[TRACE_HEADER]),
      // An MCP tool call's GraphQL request names its tool, for the log line (mcp/server.ts).
      ...(typeof tool === 'string' && TOOL_NAME.test(tool) ? { tool } : {}),
    });
    // A CORS preflight never has a key, and is no GraphQL work: a stranger's, never held to the keyless bounds.
    if (state.key !== null && knownKeys.knows(state.key)) state.lane = 'known';
    else if (state.key === null && req.method === 'OPTIONS') state.lane = 'stranger';
    return state;
  };
  // What a request is decides how it is admitted: a subscription yoga streams takes a stream's place;
  // one yoga would not stream is refused; every other request takes a slot (operation-type.ts). A
  // subscription proves its key as a request does: one whose key the upstream has not accepted lately (a
  // stranger's, or one with no key) waits in its line for a slot like any request, and takes a stream's
  // place only once the live plugin has checked its key with the upstream (use-live.ts). Keys nobody
  // issued hold no stream's place, only the strangers' bounded share of the slots while they are refused.
  const admit = (req: IncomingMessage, res: ServerResponse): void => {
    const state = arrivingState(req);
    if (state.operationType !== 'subscription') return admitRequest(req, res, state);
    if (!streamsSubscription(req.headers.accept)) return refuse(req, res, NOT_STREAMABLE, config);
    if (state.lane !== 'known') return admitRequest(req, res, state);
    admitStream(req, res, state);
  };
  // An answer its reader does not take within the send timeout ends its connection (delivery.ts).
  const deliveries = watchDeliveries(
    () => inFlight.responses(),
    { sendTimeoutMs: config.sendTimeoutMs, bufferMaxBytes: config.sendBufferMaxBytes },
    (ended) => logger.warn(ended, 'connections ended: answers not read'),
  );
  server.once('close', () => {
    deliveries.stop();
  });
  // The body cap is enforced before anything is buffered, so an oversized body never is. The
  // health check skips the line: it says the process is alive, however busy.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    responses.set(req.socket, res);
    inFlight.track(res);
    const refusal = bodyRefusal(req, config.limits.bodyBytes);
    if (refusal) refuse(req, res, refusal, config);
    else if (req.url === '/' && (req.method === 'GET' || req.method === 'HEAD')) redirectToGraphQL(res);
    else if (req.url === '/health') answerHealth(res);
    else if (req.url === '/ready' && (req.method === 'GET' || req.method === 'HEAD')) answerReadiness(res, phase, report);
    else if (
      config.mcpEndpoint !== undefined &&
      (req.url === config.mcpEndpoint.path || req.url?.startsWith(`${config.mcpEndpoint.path}?`))
    ) {
      const { handle } = config.mcpEndpoint;
      readBody(req, res, config.limits.bodyBytes, {
        read: () =>
          void webAnswerOf(req, res, handle, logger).then((response) =>
            ending.finish(req, res, newRequestState(undefined), { response, facts: null }),
          ),
        tooLarge: () => refuse(req, res, bodyTooLarge(config.limits.bodyBytes), config),
      });
    }
    // A static page is no work: it never waits for a slot.
    else if (config.graphiql && wantsGraphiQLPage(req.method, req.headers.accept, req.url)) handle(req, res, newRequestState(undefined));
    else {
      readBody(req, res, config.limits.bodyBytes, {
        read: () => admit(req, res),
        tooLarge: () => refuse(req, res, bodyTooLarge(config.limits.bodyBytes), config),
      });
    }
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    const res = responses.get(socket);
    // As node does by default: never write over a response whose headers are already out.
    const answering = res !== undefined && !res.writableFinished;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && answering && !res.headersSent) {
      refuse(res.req, res, receivedTooSlowly(receiveTimeoutMs), config); // closes the connection once written
      return;
    }
    if (socket.writable && !(answering && res.headersSent)) socket.write(clientErrorAnswer(error.code, receiveTimeoutMs));
    socket.destroy(error);
  });
  const url = await listenOn(server, config.host, config.port);

  phase = 'serving';
  let drained: Promise<void> | undefined;

  return {
    url,
    server,
    get phase() {
      return phase;
    },
    load: () => ({ active: admission.active, queued: admission.queued }),
    drain() {
      if (drained) return drained;
      phase = 'draining';
      const closed = openStreams.closeAll();
      if (closed > 0) logger.info({ streams: closed }, 'event streams closed: draining');
      drained = drainServer(server, inFlight, config.drain);
      return drained;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * What node answers a client error by default (a request that does not parse, headers too large),
 * since a 'clientError' listener replaces it; a request late with its headers gets the gateway's 408.
 */
function clientErrorAnswer(code: string | undefined, receiveTimeoutMs: number): string {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawRefusal(receivedTooSlowly(receiveTimeoutMs));
    case 'HPE_HEADER_OVERFLOW':
      return 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n';
    default:
      return 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
  }
}

/**
 * Readiness for a load balancer or Kubernetes: 200 while serving, 503 while starting or draining. It
 * never asks the upstream (a probe a second per replica would eat the upstream's rate limit, and a
 * replica still answers from its cache while the upstream is down): breaker and store are reported only.
 */
function answerReadiness(res: ServerResponse, phase: ServingPhase, report: () => ReadinessReport): void {
  const body = JSON.stringify({ status: phase === 'serving' ? 'ready' : phase, ...report() });
  res.writeHead(phase === 'serving' ? 200 : 503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...SECURITY_HEADERS,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Liveness: the process answers, whatever its phase; with the version, for whoever wants to know which runs. */
function answerHealth(res: ServerResponse): void {
  const body = JSON.stringify({ status: 'alive', version: VERSION });
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...SECURITY_HEADERS,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** The root has nothing of its own: a browser that opens it lands on GraphiQL. */
function redirectToGraphQL(res: ServerResponse): void {
  res.writeHead(302, { location: GRAPHQL_ENDPOINT, 'content-length': '0', ...SECURITY_HEADERS });
  res.end();
}

/** A request admitted as a stream: nothing to release, a stream already. */
const STREAM_SLOT: Slot = { stream: true, free: () => undefined, becomeStream: () => true };
