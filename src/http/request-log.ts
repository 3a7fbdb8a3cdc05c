// One log line per GraphQL request, written by the ending (answer.ts): operation name, duration, upstream
// calls, cost, outcome. Built from an allow-list of fields, so headers (the key) and variables
// (passwords) can never reach it.
// Each operation name has one pino child (RequestLog): the name is written into the child's bindings
// once, and each line adds only its figures.
// The gateway's own logger (src/log.ts: pino's defaults, its lines gathered) gets the line built at once
// from a template, the text pino would write for it (test/http/request-log.test.ts compares them), and
// written where pino writes: pino's generic serialization of each field costs several times the
// template's, a sizeable part of a stored answer (docs/performance.md#the-request-log). A logger given
// by whoever embeds the gateway is written through pino, its settings (formatters, hooks) applied.
import { LRUCache } from 'lru-cache';
import { type Logger, pino } from 'pino';
import type { RequestLogFields, RequestLogWriter } from './answer.js';

/** A request log line: its operation's name and figures. */
export interface RequestLogLine extends RequestLogFields {
  operation: string | null;
}

const MAX_NAME_LENGTH = 100;
/** Operation names with a child logger of their own; names past it (a client making up names) share the least recent's fate. */
const MAX_NAMED_LOGGERS = 1_000;

/** Where the gateway's own logger writes its lines, each whole (src/log.ts). */
export interface LineSink {
  write(line: string): void;
}

/** pino's level number for info, and what its default `{"level":30,"time":…` begins with. */
const INFO = 30;

/** An operation name's child logger, and the text pino writes for its bindings. */
interface Named {
  child: Logger;
  bindings: string;
}

/** The fields requestLine writes, in its order: a field added to RequestLogFields fails to compile until it is written. */
const LINE_FIELDS = ['durationMs', 'upstreamCalls', 'cost', 'cache', 'outcome', 'errorCodes', 'storedAnswer', 'trace_id', 'tool'] as const;
const everyFieldWritten: Exclude<keyof RequestLogFields, (typeof LINE_FIELDS)[number]> extends never ? true : never = true;
void everyFieldWritten;

/** A number as pino writes it: a finite number as JSON writes it, anything else null. */
const numberOf = (value: number): number | null => (Number.isFinite(value) ? value : null);

/**
 * The line pino writes for `child.info(fields, 'graphql request')` with its default settings (level as a
 * number, epoch time, `msg`), `bindings` the child's (pino.symbols.chindingsSym): the fields in the
 * order every caller gives them, undefined ones left out, as pino leaves them out.
 */
export function requestLine(bindings: string, fields: RequestLogFields, time: number): string {
  const { cache } = fields;
  const cost = fields.cost === null ? null : numberOf(fields.cost);
  const codes = fields.errorCodes === undefined ? '' : `,"errorCodes":${JSON.stringify(fields.errorCodes)}`;
  const stored = fields.storedAnswer === true ? ',"storedAnswer":true' : '';
  const trace = fields.trace_id === undefined ? '' : `,"trace_id":${JSON.stringify(fields.trace_id)}`;
  const tool = fields.tool === undefined ? '' : `,"tool":${JSON.stringify(fields.tool)}`;
  return `{"level":${INFO},"time":${time}${bindings},"durationMs":${numberOf(fields.durationMs)},"upstreamCalls":${numberOf(fields.upstreamCalls)},"cost":${cost},"cache":{"hits":${numberOf(cache.hits)},"misses":${numberOf(cache.misses)},"stale":${numberOf(cache.stale)}},"outcome":${JSON.stringify(fields.outcome)}${codes}${stored}${trace}${tool},"msg":"graphql request"}\n`;
}

/** The request log: `graphql request` lines at info, each operation's name bound once in a pino child. */
export class RequestLog implements RequestLogWriter {
  private readonly named = new LRUCache<string, Named>({ max: MAX_NAMED_LOGGERS });
  private readonly anonymous: Named;

  /**
   * `lines`: where `logger` writes, given only when `logger` is pino with its defaults (the gateway's own,
   * src/log.ts): the lines are then built from the template and written there.
   */
  constructor(
    private readonly logger: Logger,
    private readonly lines?: LineSink,
  ) {
    this.anonymous = this.namedOf(null);
  }

  write(operation: string | null, fields: RequestLogFields): void {
    let named = this.anonymous;
    if (operation !== null) {
      const name = operation.length > MAX_NAME_LENGTH ? operation.slice(0, MAX_NAME_LENGTH) : operation;
      named = this.named.get(name) ?? this.bind(name);
    }
    if (this.lines === undefined) named.child.info(fields, 'graphql request');
    else if (this.logger.levelVal <= INFO) this.lines.write(requestLine(named.bindings, fields, Date.now()));
  }

  /** A fault of the gateway's own while answering (the request is answered another way). */
  fault(error: unknown): void {
    this.logger.error({ err: error }, 'known operation path failed');
  }

  private namedOf(operation: string | null): Named {
    const child = this.logger.child({ operation });
    return { child, bindings: (child as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '' };
  }

  private bind(name: string): Named {
    const named = this.namedOf(name);
    this.named.set(name, named);
    return named;
  }
}
