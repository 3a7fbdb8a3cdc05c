// A small client for the sandbox tests: real HTTP through global fetch, JSON decoded when it is JSON.
import type { Sandbox } from '../../src/sandbox/index.js';

export const KEY_1 = 'sandbox-key-1';
export const KEY_2 = 'sandbox-key-2';
export const TODAY = '2026-03-15';

// The sandbox's own wire types: the tests read what the server says it writes.
export type { WireWebsite } from '../../src/sandbox/store.js';
export type { PaginatedBody as WirePage } from '../../src/sandbox/pagination.js';
export type { StatRow } from '../../src/sandbox/stat-series.js';
export type { LegacyWireWebsite } from '../../src/sandbox/store.js';
export type { PlainPaginatedBody as WirePlainPage } from '../../src/sandbox/pagination.js';

export interface ErrorBody {
  message: string | Record<string, string[]>;
  status?: number;
}

export interface Reply<T> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface CallOptions {
  method?: string;
  /** null sends no Authorization header. */
  key?: string | null;
  form?: Record<string, string>;
  json?: unknown;
  headers?: Record<string, string>;
}

export async function call<T = unknown>(sandbox: Sandbox | string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const base = typeof sandbox === 'string' ? sandbox : sandbox.url;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const key = options.key === undefined ? KEY_1 : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(base + path, { method: options.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed as T };
}

/** The stats query string for a range, with extra parameters. */
export function statsPath(id: number, name: string, from: string, to: string, extra: Record<string, string> = {}): string {
  return `/api/v1/stats/${id}?${new URLSearchParams({ name, from, to, ...extra }).toString()}`;
}
