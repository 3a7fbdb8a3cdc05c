// The node:http server in front of yoga: body limits, the receive timeout, admission control, `/`,
// `/health` and `/ready`, and the drain (drain.ts). Every answer leaves through the ending (answer.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type LISTEN_SETTINGS, closeNow, listenOn } from './listen.js';
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

export type HttpConfig = RefusalConfig &
  SettingsOf<typeof LISTEN_SETTINGS> &
  SettingsOf<typeof DELIVERY_SETTINGS> &
  SettingsOf<typeof ADMISSION_SETTINGS> &
  Pick<SettingsOf<typeof RECEIVE_SETTINGS>, 'receiveTimeoutMs'> &
  Pick<RequestBounds, 'requestDeadlineMs'> & {
    graphiql: boolean;
    traces?: boolean;
    limits: Pick<SettingsOf<typeof RECEIVE_SETTINGS>, 'bodyBytes'>;
    /** KEY_RECHECK_S. */
    knownKeyMs: number;
    live?: Partial<Pick<SettingsOf<typeof LIVE_SETTINGS>, 'maxStreams' | 'maxLifetimeMs'>>;
    drain: DrainOptions;
    /** Answered before admission: each tool call it makes is a GraphQL request that waits in line. */
    mcpEndpoint?: { path: string; handle: WebHandler };
  };

/** What /ready reports besides its verdict, without deciding it. */
export type ReadinessReport = Record<string, string>;

export type Answerer = (req: IncomingMessage, res: ServerResponse, state: RequestState) => Answer | Promise<Answer>;

export async function serveHttp(
  answer: Answerer,
  ending: Ending,
  config: HttpConfig,
  logger: Logger,
  report: () => ReadinessReport = () => ({}),
  onRefused?: (reason: 'full' | 'waited') => void,
) {
  let phase: ServingPhase = 'starting';
  /** A fault of the gateway's own is a 500 that names no detail. */
  const failed = (res: ServerResponse, state: RequestState, error: unknown): void => {
    logger.error({ err: error }, 'answering a request failed');
    state.slot?.free(false);
    if (!res.headersSent) res.writeHead(500, { 'content-length': '0', ...SECURITY_HEADERS });
    res.end();
  };
  // An answer made at once (a stored one) is sent with no closure made for it.
  const handle = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    try {
      const made = answer(req, res, state);
      if (!(made instanceof Promise)) return ending.finish(req, res, state, made);
      made.then(
        (answered) => ending.finish(req, res, state, answered),
        (error) => failed(res, state, error),
      );
    } catch (error) {
      failed(res, state, error);
    }
  };
  const inFlight = new InFlight();
  const admission = createAdmission({
    maxActive: config.maxActiveRequests,
    maxQueued: config.maxQueuedRequests,
    maxWaitMs: config.requestDeadlineMs,
    reject: (req, res, reason) => {
      logger.warn(
        { status: 503, reason: reason === 'full' ? 'line full' : 'waited too long', active: admission.active, queued: admission.queued },
        'request refused: overloaded',
      );
      onRefused?.(reason);
      refuse(req, res, OVERLOADED, config);
    },
  });

  // An event stream waits on the live pollers, not on work: a place of its own (LIVE_MAX_STREAMS), no slot.
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

  // A request gets in line only once its body is here: a slow sender holds its own socket, never a slot.
  // node cuts one whose headers and body are late (408); its wait in line is not counted against it.
  const receiveTimeoutMs = config.receiveTimeoutMs;
  const server = createServer({
    ServerResponse: PacedResponse,
    headersTimeout: receiveTimeoutMs,
    requestTimeout: receiveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, receiveTimeoutMs),
  });
  // Each connection's response in flight: a late body's 408 goes through it, as the other refusals do.
  const responses = new WeakMap<Duplex, ServerResponse>();
  const admitStream = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    if (phase === 'draining') return refuse(req, res, DRAINING, config);
    streams.admit(req, res, (admitted, stream) => {
      openStreams.track(stream);
      state.keyKnown = state.key !== null && knownKeys.knows(state.key);
      state.slot = STREAM_SLOT;
      handle(admitted, stream, state);
    });
  };
  const knownKeys = createKnownKeys(config.knownKeyMs);
  const admitRequest = (req: IncomingMessage, res: ServerResponse, state: RequestState): void => {
    const { key } = state;
    // Set once admit returns: a request that starts before (a free slot) did not wait.
    let waited = false;
    admission.admit(
      req,
      res,
      (admitted, response, release) => {
        // Known when it starts: a request of the same key answered while it waited counts.
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
  const arrivingState = (req: IncomingMessage): RequestState => {
    const { type, parsedBody, parseLater } = readOperation(req);
    const tool = req.headers[TOOL_HEADER];
    const state = newRequestState(req.headers.authorization, {
      operationType: type,
      // A body seen lately is parsed only if something runs its operation.
      body: parsedBody !== undefined ? () => parsedBody : parseLater ? () => parsedLater(req) : undefined,
      traced: config.traces === true && type !== 'subscription' && asksForTrace(req.headers[TRACE_HEADER]),
      // An MCP tool call names its tool, for the log line.
      tool: typeof tool === 'string' && TOOL_NAME.test(tool) ? tool : undefined,
    });
    // A preflight has no key and is no GraphQL work: not held to the keyless bounds.
    if (state.key !== null && knownKeys.knows(state.key)) state.lane = 'known';
    else if (state.key === null && req.method === 'OPTIONS') state.lane = 'stranger';
    return state;
  };
  // A subscription yoga streams takes a stream's place, one it would not stream is refused, any other
  // request takes a slot. A subscription whose key is not known waits for a slot like any request, and
  // moves to a stream's place once use-live.ts checked its key: made-up keys hold no stream's place.
  const admit = (req: IncomingMessage, res: ServerResponse): void => {
    const state = arrivingState(req);
    if (state.operationType !== 'subscription') return admitRequest(req, res, state);
    if (!streamsSubscription(req.headers.accept)) return refuse(req, res, NOT_STREAMABLE, config);
    if (state.lane !== 'known') return admitRequest(req, res, state);
    admitStream(req, res, state);
  };
  const deliveries = watchDeliveries(
    () => inFlight.responses(),
    { sendTimeoutMs: config.sendTimeoutMs, bufferMaxBytes: config.sendBufferMaxBytes },
    (ended) => logger.warn(ended, 'connections ended: answers not read'),
  );
  server.once('close', () => deliveries.stop());
  // The body cap is checked before anything is buffered; /health skips the line, however busy.
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
      receive(req, res, () => {
        void webAnswerOf(req, res, handle, logger).then((response) =>
          ending.finish(req, res, newRequestState(undefined), { response, facts: null }),
        );
      });
    } else if (config.graphiql && wantsGraphiQLPage(req.method, req.headers.accept, req.url)) handle(req, res, newRequestState(undefined));
    else receive(req, res, () => admit(req, res));
  });
  const receive = (req: IncomingMessage, res: ServerResponse, read: () => void): void =>
    readBody(req, res, config.limits.bodyBytes, { read, tooLarge: () => refuse(req, res, bodyTooLarge(config.limits.bodyBytes), config) });
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
    /** Event streams close at once (their clients subscribe elsewhere), then drain.ts. */
    drain(): Promise<void> {
      if (drained) return drained;
      phase = 'draining';
      const closed = openStreams.closeAll();
      if (closed > 0) logger.info({ streams: closed }, 'event streams closed: draining');
      drained = drainServer(server, inFlight, config.drain);
      return drained;
    },
    close: () => closeNow(server),
  };
}

/** node's default answers to a client error, which a 'clientError' listener replaces; late headers get our 408. */
function clientErrorAnswer(code: string | undefined, receiveTimeoutMs: number): string {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return rawRefusal(receivedTooSlowly(receiveTimeoutMs));
  return `HTTP/1.1 ${CLIENT_ERRORS.get(code) ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`;
}

const CLIENT_ERRORS = new Map<string | undefined, string>([
  ['HPE_HEADER_OVERFLOW', '431 Request Header Fields Too Large'],
  ['HPE_CHUNK_EXTENSIONS_OVERFLOW', '413 Payload Too Large'],
]);

/** Never asks the upstream: probes would eat its rate limit, and a replica answers from its cache meanwhile. */
function answerReadiness(res: ServerResponse, phase: ServingPhase, report: () => ReadinessReport): void {
  answerJson(res, phase === 'serving' ? 200 : 503, { status: phase === 'serving' ? 'ready' : phase, ...report() });
}

/** Liveness, whatever the phase, with the version that runs. */
function answerHealth(res: ServerResponse): void {
  answerJson(res, 200, { status: 'alive', version: VERSION });
}

function answerJson(res: ServerResponse, status: number, answer: object): void {
  const body = JSON.stringify(answer);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...SECURITY_HEADERS,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** A browser that opens the root lands on GraphiQL. */
function redirectToGraphQL(res: ServerResponse): void {
  res.writeHead(302, { location: GRAPHQL_ENDPOINT, 'content-length': '0', ...SECURITY_HEADERS });
  res.end();
}

const STREAM_SLOT: Slot = { stream: true, free: () => undefined, becomeStream: () => true };
