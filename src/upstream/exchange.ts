// One HTTP exchange with the upstream on undici's dispatch API: the status, the headers and the body as text.
// Not undici's request(): its AsyncResource, Readable body and stream machinery live across collections
// under load and reach V8's old generation; here a call is one handler object and its chunks. Not undici's
// dump interceptor for unread bodies: it drops every body, and whether one is read is known from the status.
import type { Dispatcher } from 'undici';
import { BodyTooLargeError, DeadlinePassedError } from './errors.js';

export type Headers = Record<string, string | string[] | undefined>;

/** What to do with a body, decided from the status. */
export type BodyPlan =
  /** Read it, up to `limit` bytes; with a deadline (Date.now() value), checked as each chunk arrives. */
  | { read: true; limit: number; deadline?: number }
  /** Unread: up to `limit` bytes drained so the connection is reused, past that it is closed. */
  | { read: false; limit: number };

export interface Exchange {
  status: number;
  headers: Headers;
  /** The body as UTF-8 text; null when it was not read or could not be. */
  text: string | null;
  /** Why the body could not be read after the headers; null when it was (or was not asked for). */
  failure: unknown;
  /** The body's bytes that arrived, read or drained. */
  bytes: number;
}

type Controller = Dispatcher.DispatchController;

/** Resolves once the exchange is over; rejects only when no response came. `signal` stops it at any point. */
export function exchange(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  plan: (status: number, headers: Headers) => BodyPlan,
  signal?: AbortSignal,
): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => new ExchangeHandler(plan, resolve, reject, signal).start(dispatcher, options));
}

// The exchanges in flight under each signal, told by one listener of its own: adding and removing an
// EventTarget listener for every call cost more than the call's own JavaScript around undici.
const underSignal = new WeakMap<AbortSignal, Set<ExchangeHandler>>();
const listenedTo = (signal: AbortSignal, all = new Set<ExchangeHandler>()): Set<ExchangeHandler> => {
  signal.addEventListener('abort', () => all.forEach((each) => each.onAbort()), { once: true });
  underSignal.set(signal, all);
  return all;
};

class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Controller | null = null;
  private abortReason: Error | undefined = undefined;
  private settled = false;
  private response: Exchange | null = null;
  private body: BodyPlan | null = null;
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly plan: (status: number, headers: Headers) => BodyPlan,
    private readonly resolve: (exchange: Exchange) => void,
    private readonly reject: (error: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {}

  start(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    if (this.signal) {
      if (this.signal.aborted) return this.finish(this.signal.reason);
      (underSignal.get(this.signal) ?? listenedTo(this.signal)).add(this);
    }
    try {
      dispatcher.dispatch(options, this);
    } catch (error) {
      // undici's dispatchers report through onResponseError; anything else that throws still settles.
      this.finish(error);
    }
  }

  onAbort(): void {
    const reason: unknown = this.signal?.reason;
    this.abortReason = reason instanceof Error ? reason : new Error('The call was aborted.', { cause: reason });
    // On a socket: stopped now. Still waiting in the pool: stopped when undici hands it one (onRequestStart).
    this.controller?.abort(this.abortReason);
  }

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.abortReason !== undefined) controller.abort(this.abortReason);
  }

  onResponseStart(controller: Controller, status: number, headers: Headers): void {
    if (status < 200) return; // 1xx: the response is still to come
    this.response = { status, headers, text: null, failure: null, bytes: 0 };
    const body = this.plan(status, headers);
    this.body = body;
    const length = headers['content-length'];
    if (typeof length === 'string' && /^\d+$/.test(length) && Number(length) > body.limit) {
      this.stop(controller, body.read ? new BodyTooLargeError() : null);
    }
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    const body = this.body;
    if (body === null || this.settled) return;
    this.size += chunk.length;
    if (this.size > body.limit) return this.stop(controller, body.read ? new BodyTooLargeError() : null);
    if (!body.read) return;
    if (body.deadline !== undefined && Date.now() > body.deadline) {
      return this.stop(controller, new DeadlinePassedError('The request deadline passed while the body was arriving.'));
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const { response, body, chunks } = this;
    if (response === null || this.settled) return;
    if (body?.read) {
      response.text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks, this.size).toString('utf8');
    }
    this.finish(null);
  }

  onResponseError(_controller: Controller | undefined, error: Error): void {
    if (this.settled) return;
    // After the headers, a broken body is the response's failure (the status stands); before, the call's.
    if (this.response !== null) this.response.failure = this.body?.read ? error : null;
    this.finish(error);
  }

  /** Ends the exchange now, closing its connection; `failure` is the body's (null: none worth telling). */
  private stop(controller: Controller, failure: Error | null): void {
    const response = this.response as Exchange;
    response.failure = failure;
    this.finish(null);
    controller.abort(failure ?? new BodyTooLargeError());
  }

  private finish(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (this.signal) underSignal.get(this.signal)?.delete(this);
    this.chunks = [];
    if (this.response !== null) {
      this.response.bytes = this.size;
      this.resolve(this.response);
    } else this.reject(error);
  }
}
