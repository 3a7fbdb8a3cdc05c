// Delivery: a reader who stalls holds only its connection (its slot is released), bounded here. A
// response whose waiting bytes its reader has not made smaller within SEND_TIMEOUT_MS ends its
// connection; past SEND_BUFFER_MAX_BYTES waiting in all, those that waited longest end first.
import { ServerResponse, type IncomingMessage } from 'node:http';
import { integer } from '../settings.js';

export interface DeliveryOptions {
  sendTimeoutMs: number;
  bufferMaxBytes: number;
}

export const DELIVERY_SETTINGS = {
  sendTimeoutMs: integer('SEND_TIMEOUT_MS', {
    fallback: 10_000,
    min: 100,
    max: 600_000,
    unit: 'ms',
    doc: 'how long an answer may wait on a client that reads none of it before its connection is closed',
  }),
  sendBufferMaxBytes: integer('SEND_BUFFER_MAX_BYTES', {
    fallback: 64 * 1024 * 1024,
    min: 1024 ** 2,
    max: 1024 ** 4,
    unit: 'bytes',
    doc: 'bytes of answers waiting on their readers, all connections together',
  }),
};

export const PIECE_BYTES = 64 * 1024;

type WriteCallback = (error?: Error | null) => void;

/** Writes a large chunk as pieces: node counts a chunk as written only once all of it is. */
export class PacedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const bytes = largeChunk(chunk, encoding);
    if (bytes === null) return super.write(chunk as never, encoding as never, callback as never);
    const done = (typeof encoding === 'function' ? encoding : callback) as WriteCallback | undefined;
    let ok = true;
    for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) {
      const piece = bytes.subarray(at, at + PIECE_BYTES);
      ok = done !== undefined && at + PIECE_BYTES >= bytes.byteLength ? super.write(piece, done) : super.write(piece);
    }
    return ok;
  }

  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    const bytes = largeChunk(chunk, encoding);
    if (bytes === null) return super.end(chunk as never, encoding as never, callback as never);
    // As node does for a body given whole to end(): its length is known.
    if (!this.headersSent && !this.hasHeader('content-length')) this.setHeader('content-length', bytes.byteLength);
    this.write(bytes);
    return super.end((typeof encoding === 'function' ? encoding : callback) as never);
  }
}

function largeChunk(chunk: unknown, encoding: unknown): Uint8Array | null {
  // A string's bytes are at most four times its length: one shorter than a quarter piece is a piece.
  if (typeof chunk === 'string' && chunk.length > PIECE_BYTES / 4) {
    const bytes = Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    return bytes.byteLength > PIECE_BYTES ? bytes : null;
  }
  return chunk instanceof Uint8Array && chunk.byteLength > PIECE_BYTES ? chunk : null;
}

/** When its reader last took some. */
interface Waiting {
  since: number;
  bytes: number;
}

/** Looks at the open responses every second (or half send timeout); `onEnded` hears of connections ended. */
export function watchDeliveries(
  responses: () => Iterable<ServerResponse>,
  options: DeliveryOptions,
  onEnded: (ended: { unread: number; overBuffer: number; waitingBytes: number }) => void,
  now: () => number = () => performance.now(),
): { stop(): void } {
  const waiting = new Map<ServerResponse, Waiting>();

  const sweep = (): void => {
    const at = now();
    let total = 0;
    let unread = 0;
    const seen = new Set<ServerResponse>();
    for (const res of responses()) {
      const bytes = res.destroyed ? 0 : res.writableLength;
      if (bytes === 0) continue;
      const last = waiting.get(res);
      // Its reader took some: its clock starts again. More written (a stream's next event) is no reading.
      if (last === undefined || bytes < last.bytes) waiting.set(res, { since: at, bytes });
      else last.bytes = bytes;
      if (at - (waiting.get(res) as Waiting).since > options.sendTimeoutMs) {
        res.destroy();
        unread++;
        continue;
      }
      seen.add(res);
      total += bytes;
    }
    for (const res of waiting.keys()) if (!seen.has(res)) waiting.delete(res);
    const waitingBytes = total;
    let overBuffer = 0;
    if (total > options.bufferMaxBytes) {
      const longest = [...waiting.entries()].sort(([, a], [, b]) => a.since - b.since);
      for (const [res, entry] of longest) {
        if (total <= options.bufferMaxBytes) break;
        res.destroy();
        waiting.delete(res);
        total -= entry.bytes;
        overBuffer++;
      }
    }
    if (unread > 0 || overBuffer > 0) onEnded({ unread, overBuffer, waitingBytes });
  };

  const timer = setInterval(sweep, Math.min(1_000, options.sendTimeoutMs / 2));
  timer.unref();
  return {
    stop: () => clearInterval(timer),
  };
}
