// A topic's results and the streams that watch it. A result is pushed only when its JSON text differs from
// the last one pushed; a stream that joins gets the last one at once; each stream holds at most one result
// not yet taken: a slow one gets the latest, never a backlog.

/** A subscriber's results; return() leaves (the client went away). */
export interface LiveStream<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T, undefined>>;
}

interface Subscriber {
  /** The latest result not yet taken. */
  pending: { value: unknown } | null;
  ended: boolean;
  wake: (() => void) | null;
}

export class Broadcast {
  private readonly subscribers = new Set<Subscriber>();
  private last: { text: string; value: unknown } | null = null;

  /** `texts`: each pushed result's JSON text, made once to compare it, kept for every stream to send. */
  constructor(
    private readonly texts: WeakMap<object, string>,
    private readonly onEmpty: () => void,
  ) {}

  get size(): number {
    return this.subscribers.size;
  }

  get started(): boolean {
    return this.last !== null;
  }

  isLast(text: string): boolean {
    return this.last?.text === text;
  }

  offer(text: string, value: unknown): void {
    if (this.last !== null && this.last.text === text) return;
    this.last = { text, value };
    if (typeof value === 'object' && value !== null) this.texts.set(value, text);
    this.deliver(value);
  }

  /** Pushes a value to every stream without making it the last result. */
  deliver(value: unknown): void {
    for (const subscriber of this.subscribers) {
      subscriber.pending = { value };
      subscriber.wake?.();
    }
  }

  /** Ends every stream once it has taken what it holds. */
  endAll(): void {
    for (const subscriber of this.subscribers) {
      subscriber.ended = true;
      subscriber.wake?.();
    }
  }

  join<T>(): LiveStream<T> {
    const subscriber: Subscriber = { pending: this.last ? { value: this.last.value } : null, ended: false, wake: null };
    this.subscribers.add(subscriber);
    const leave = (): IteratorResult<T, undefined> => {
      subscriber.ended = true;
      subscriber.pending = null;
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0) this.onEmpty();
      subscriber.wake?.();
      return { done: true, value: undefined };
    };
    // A hand-written iterator, not an async generator: a generator waiting for the next result would
    // only see return() (the client left) once that result came, and its poller would poll on meanwhile.
    const iterator: LiveStream<T> = {
      next: async () => {
        while (true) {
          if (subscriber.pending) {
            const { value } = subscriber.pending;
            subscriber.pending = null;
            return { done: false, value: value as T };
          }
          if (subscriber.ended) return leave();
          await new Promise<void>((resolve) => {
            subscriber.wake = resolve;
          });
          subscriber.wake = null;
        }
      },
      return: async () => leave(),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
