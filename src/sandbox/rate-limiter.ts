// A fixed-window limiter per API key, like Laravel's throttle middleware: a rejected attempt does
// not count, and the window restarts with the first request after it ends.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends (for Retry-After); at least 1. */
  retryAfter: number;
  /** Unix time in seconds at which the window ends. */
  resetAt: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; hits: number }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  attempt(key: string): RateDecision {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      window = { start: now, hits: 0 };
      this.windows.set(key, window);
    }
    const end = window.start + this.windowMs;
    const allowed = window.hits < this.limit;
    if (allowed) window.hits++;
    return {
      allowed,
      limit: this.limit,
      remaining: this.limit - window.hits,
      retryAfter: Math.max(1, Math.ceil((end - now) / 1000)),
      resetAt: Math.ceil(end / 1000),
    };
  }
}
