// Counts and records /api/v1 requests so tests can see how many upstream calls a gateway made,
// with what, and how many overlapped.
import type { RequestLog, RequestLogEntry } from './types.js';

export class MemoryRequestLog implements RequestLog {
  /** Keeps the latest `limit` entries (count and peaks are unaffected), so a long run stays bounded. */
  constructor(private readonly limit = 10_000) {}

  private list: RequestLogEntry[] = [];
  private received = 0;
  private current = 0;
  private peak = 0;
  /** Entries that have not ended yet, whether or not a reset removed them from `entries`. */
  private readonly open = new Set<RequestLogEntry>();

  get count(): number {
    return this.received;
  }
  get entries(): readonly RequestLogEntry[] {
    return this.list;
  }
  get maxInFlight(): number {
    return this.peak;
  }
  get inFlight(): number {
    return this.current;
  }

  /** A request arrived: it is counted and in flight from now on. */
  begin(entry: RequestLogEntry): void {
    this.list.push(entry);
    if (this.list.length > this.limit) this.list.shift();
    this.received++;
    this.open.add(entry);
    this.current++;
    this.peak = Math.max(this.peak, this.current);
  }

  /** Its answer finished (status as sent) or its socket went away (status 0). Idempotent. */
  end(entry: RequestLogEntry, status: number, at: number): void {
    if (!this.open.delete(entry)) return;
    entry.status = status;
    entry.endedAt = at;
    this.current--;
  }

  /** Requests still in flight remain in flight; the peak restarts from them. */
  reset(): void {
    this.list = [];
    this.received = 0;
    this.peak = this.current;
  }

  toJSON(): { count: number; maxInFlight: number; inFlight: number; entries: readonly RequestLogEntry[] } {
    return { count: this.count, maxInFlight: this.maxInFlight, inFlight: this.inFlight, entries: this.entries };
  }
}
