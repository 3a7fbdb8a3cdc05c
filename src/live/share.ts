// What the gateways on one store (REDIS_URL: live/redis-share.ts) share of their pollers, and the rules by
// which a hub uses it: a poller polls only while it holds the topic's lock, and otherwise passes on what the
// holder publishes; the lock and the last result live as long as the wait before the holder's next poll,
// plus a margin. Every call may fail: a failure is reported, and the hub goes on as without a share (a
// claim that fails lets this gateway poll for its own streams).
import type { Spent } from './key-budget.js';

export interface Topic {
  /** The key's keyed hash: what the budget is counted by. */
  key: string;
  /** The key, document and variables: streams with the same id share one poller. */
  id: string;
}

export interface SharedResult {
  text: string;
  final?: boolean;
  endsKey?: boolean;
}

export interface LiveShare {
  /** Takes or renews the topic's lock (and its last result's life): whether this gateway holds it. */
  claim(topic: Topic, ttlMs: number): Promise<boolean>;
  release(topic: Topic): Promise<void>;
  /** To every other gateway's poller of the topic; kept (not a final one) for `ttlMs`. */
  publish(topic: Topic, result: SharedResult, ttlMs: number): Promise<void>;
  last(topic: Topic): Promise<string | null>;
  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void;
  /** Records the calls of the topic's latest poll; answers those of all the key's topics. */
  keyCalls(topic: Topic, calls: number, ttlMs: number): Promise<number>;
  /** Records `calls` now, or adds them to an earlier `entry` (negative: given back); answers the key's calls. */
  spend(key: string, calls: number, entry?: string): Promise<Spent>;
  close(): Promise<void>;
}

/** A lock lives this much longer than the wait before its holder's next poll (or the interval, if longer). */
const LOCK_MARGIN_MS = 10_000;

/** A hub's use of a share: each call's failure reported and answered as without a share. */
export class SharedTopics {
  /** Publish, renew, release: settled() waits for them. */
  private readonly unawaited = new Set<Promise<void>>();

  constructor(
    private readonly share: LiveShare,
    private readonly intervalMs: number,
    private readonly onError: (operation: string, error: unknown) => void,
  ) {}

  lockMs(delayMs: number): number {
    return Math.max(delayMs, this.intervalMs) + Math.max(LOCK_MARGIN_MS, this.intervalMs);
  }

  /** The share failing, this gateway polls for its own streams. */
  claim(topic: Topic, delayMs: number): Promise<boolean> {
    return this.orElse('live claim', () => this.share.claim(topic, this.lockMs(delayMs)), true);
  }

  /** Keeps the lock as long as the wait before the next poll, however long a Retry-After makes it. */
  renew(topic: Topic, delayMs: number): void {
    this.inBackground('live claim', this.share.claim(topic, this.lockMs(delayMs)));
  }

  release(topic: Topic): Promise<void> {
    return this.inBackground('live release', this.share.release(topic));
  }

  publish(topic: Topic, result: SharedResult, delayMs: number): void {
    this.inBackground('live publish', this.share.publish(topic, result, this.lockMs(delayMs)));
  }

  keyCalls(topic: Topic, calls: number, ttlMs: number, localCalls: number): Promise<number> {
    return this.orElse('live budget', () => this.share.keyCalls(topic, calls, ttlMs), localCalls);
  }

  last(topic: Topic): Promise<string | null> {
    return this.orElse('live last', () => this.share.last(topic), null);
  }

  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void {
    return this.share.listen(topic, (result) => {
      // A text that is not JSON (nothing of ours writes one): dropped, not thrown into the share's client.
      try {
        onResult(result);
      } catch (error) {
        this.onError('live message', error);
      }
    });
  }

  async settled(): Promise<void> {
    await Promise.all(this.unawaited);
  }

  close(): Promise<void> {
    return this.share.close();
  }

  private async orElse<T>(operation: string, call: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.onError(operation, error);
      return fallback;
    }
  }

  private inBackground(operation: string, call: Promise<unknown>): Promise<void> {
    const done = call.then(
      () => undefined,
      (error: unknown) => this.onError(operation, error),
    );
    this.unawaited.add(done);
    void done.finally(() => this.unawaited.delete(done));
    return done;
  }
}
