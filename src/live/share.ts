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

/** A result as gateways pass it to each other: its JSON text, and whether it ends the topic or the key. */
export interface SharedResult {
  text: string;
  final?: boolean;
  endsKey?: boolean;
}

/** What the gateways on one store share of their pollers (live/redis-share.ts). Any call may fail. */
export interface LiveShare {
  /** Takes or renews the topic's lock for `ttlMs` (and its last result's life with it): whether this gateway holds it. */
  claim(topic: Topic, ttlMs: number): Promise<boolean>;
  /** Lets go of the topic's lock, if this gateway holds it. */
  release(topic: Topic): Promise<void>;
  /** Sends a result to every other gateway's poller of the topic, and keeps it (not a final one) for `ttlMs`. */
  publish(topic: Topic, result: SharedResult, ttlMs: number): Promise<void>;
  /** The topic's last result, if a gateway polls it. */
  last(topic: Topic): Promise<string | null>;
  /** Calls `onResult` with each result another gateway publishes for the topic, until the returned function is called. */
  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void;
  /** Records the calls of the topic's latest poll for `ttlMs`; answers those of all the key's topics. */
  keyCalls(topic: Topic, calls: number, ttlMs: number): Promise<number>;
  /**
   * Records `calls` at this moment in the key's calls of the last minute, or adds them to `entry` (fewer
   * than none: some given back), an entry an earlier spend answered; answers them, these included.
   */
  spend(key: string, calls: number, entry?: string): Promise<Spent>;
  close(): Promise<void>;
}

/** A lock lives this much longer than the wait before its holder's next poll (or the interval, if longer). */
const LOCK_MARGIN_MS = 10_000;

/** A hub's use of a share: each call's failure reported and answered as without a share. */
export class SharedTopics {
  /** Calls nothing waits for (publish, renew, release): settled() waits for them. */
  private readonly unawaited = new Set<Promise<void>>();

  constructor(
    private readonly share: LiveShare,
    private readonly intervalMs: number,
    private readonly onError: (operation: string, error: unknown) => void,
  ) {}

  /** How long a lock (and the last result) lives when its holder waits `delayMs` before its next poll. */
  lockMs(delayMs: number): number {
    return Math.max(delayMs, this.intervalMs) + Math.max(LOCK_MARGIN_MS, this.intervalMs);
  }

  /** Whether this gateway polls the topic now: while it holds the lock, or when the share fails. */
  async claim(topic: Topic, delayMs: number): Promise<boolean> {
    try {
      return await this.share.claim(topic, this.lockMs(delayMs));
    } catch (error) {
      this.onError('live claim', error);
      return true; // the share failing: poll for this gateway's own streams
    }
  }

  /** Keeps the lock as long as the wait before the next poll, however long a Retry-After makes it. */
  renew(topic: Topic, delayMs: number): void {
    this.inBackground('live claim', this.share.claim(topic, this.lockMs(delayMs)));
  }

  /** Lets another gateway whose streams watch the topic take it over. */
  release(topic: Topic): Promise<void> {
    return this.inBackground('live release', this.share.release(topic));
  }

  publish(topic: Topic, result: SharedResult, delayMs: number): void {
    this.inBackground('live publish', this.share.publish(topic, result, this.lockMs(delayMs)));
  }

  /** The calls of the key's topics on every gateway, this poll's `calls` recorded; `localCalls` if the share fails. */
  async keyCalls(topic: Topic, calls: number, ttlMs: number, localCalls: number): Promise<number> {
    try {
      return await this.share.keyCalls(topic, calls, ttlMs);
    } catch (error) {
      this.onError('live budget', error);
      return localCalls;
    }
  }

  /** The last result a gateway kept for the topic; null when none is or the share fails. */
  async last(topic: Topic): Promise<string | null> {
    try {
      return await this.share.last(topic);
    } catch (error) {
      this.onError('live last', error);
      return null;
    }
  }

  /** Other gateways' results for the topic; one `onResult` throws on (a text that is not JSON) is dropped. */
  listen(topic: Topic, onResult: (result: SharedResult) => void): () => void {
    return this.share.listen(topic, (result) => {
      // Nothing of ours writes such a text: dropped, not thrown into the share's client.
      try {
        onResult(result);
      } catch (error) {
        this.onError('live message', error);
      }
    });
  }

  /** Waits for the calls under way in the background. */
  async settled(): Promise<void> {
    await Promise.all(this.unawaited);
  }

  close(): Promise<void> {
    return this.share.close();
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
