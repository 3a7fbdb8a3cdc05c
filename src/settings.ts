// How a module declares the environment variables it reads, beside the code that uses them: config.ts
// validates the environment against them (zod), and docs/configuration.md is tested against them.
// Nothing here reads the environment.
import { z } from 'zod';

/** What docs/configuration.md shows of a setting. */
export interface SettingDoc {
  variable: string;
  /** null: unset means off (the page says "none"). */
  shown: string | null;
  /** The unit or the kind of value (`ms`, `bytes`, `boolean`, `` `on`, `off` ``). */
  unit: string;
  doc: string;
}

export interface Setting<T> {
  readonly doc: SettingDoc;
  /** Reads a set value (trimmed, never empty); its errors name the variable and what it accepts. */
  readonly schema: z.ZodType<T, string>;
  /** When the variable is unset or empty. */
  readonly fallback: T;
  /** When unset with NODE_ENV=production, where it differs. */
  readonly productionFallback?: T;
}

/** By the name the module's code uses, possibly grouped. */
export type Declarations = { readonly [name: string]: Setting<unknown> | Declarations };

export type SettingsOf<D> = {
  -readonly [K in keyof D]: D[K] extends Setting<infer T> ? T : SettingsOf<D[K]>;
};

const isSetting = (entry: Setting<unknown> | Declarations): entry is Setting<unknown> =>
  'schema' in entry && 'fallback' in entry && 'doc' in entry;

/** Depth first in the order declared. */
export function settingsIn(declarations: Declarations): Setting<unknown>[] {
  return Object.values(declarations).flatMap((entry) => (isSetting(entry) ? [entry] : settingsIn(entry)));
}

/** When nothing is set (outside production). */
export function defaultsOf<D extends Declarations>(declarations: D): SettingsOf<D> {
  return valuesOf(declarations, (setting) => setting.fallback);
}

export function valuesOf<D extends Declarations>(declarations: D, read: (setting: Setting<unknown>) => unknown): SettingsOf<D> {
  const values: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(declarations)) values[name] = isSetting(entry) ? read(entry) : valuesOf(entry, read);
  return values as SettingsOf<D>;
}

/** With no credential: all up to the last `@` is `***` (a `/#?:@` in a password ends nothing here), `scheme://` kept. */
export function shown(value: unknown): string {
  const text = String(value);
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0] ?? '';
  return `${scheme}***${text.slice(at)}`;
}

/** A URL's user info as typed, up to the last `@`, taken before a parser reads its `/?#@` as the host's end. */
export function splitUserinfo(value: string): { userinfo: string | null; rest: string } {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0];
  const at = value.lastIndexOf('@');
  if (scheme === undefined || at < scheme.length) return { userinfo: null, rest: value };
  return { userinfo: value.slice(scheme.length, at), rest: scheme + value.slice(at + 1) };
}

interface Described {
  unit: string;
  doc: string;
}

interface Bounded {
  min: number;
  max: number;
}

/** An integer from `min` to `max`. */
export function integer(
  variable: string,
  options: Described & Bounded & { fallback: number; productionFallback?: number },
): Setting<number> {
  return {
    doc: docOf(variable, String(options.fallback), options),
    schema: integerSchema(variable, options),
    fallback: options.fallback,
    ...(options.productionFallback === undefined ? {} : { productionFallback: options.productionFallback }),
  };
}

/** The bounds of what a cache may take of V8's heap: the same for every cache. */
export const HEAP_BYTES = { min: 0, max: 16 * 1024 ** 3, unit: 'bytes' } as const;

/** null when unset: the feature is off. */
export function optionalInteger(variable: string, options: Described & Bounded): Setting<number | null> {
  return { doc: docOf(variable, null, options), schema: integerSchema(variable, options), fallback: null };
}

/** Whole seconds, read as milliseconds; `min` and `max` in seconds. */
export function seconds(variable: string, options: Omit<Described, 'unit'> & Bounded & { fallbackMs: number }): Setting<number> {
  return {
    doc: docOf(variable, String(options.fallbackMs / 1000), { ...options, unit: 's' }),
    schema: integerSchema(variable, options).transform((value) => value * 1000),
    fallback: options.fallbackMs,
  };
}

/** Seconds with up to three decimals (`0.25`), read as whole milliseconds; `min` and `max` in seconds. */
export function decimalSeconds(variable: string, options: Omit<Described, 'unit'> & Bounded & { fallbackMs: number }): Setting<number> {
  const what = `a number of seconds from ${options.min} to ${options.max} (at most 3 decimals)`;
  return {
    doc: docOf(variable, String(options.fallbackMs / 1000), { ...options, unit: 's' }),
    schema: numberSchema(variable, /^\d+(\.\d{1,3})?$/, what, options).transform((value) => Math.round(value * 1000)),
    fallback: options.fallbackMs,
  };
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** true or false (also 1/0, yes/no, on/off, any case). */
export function flag(
  variable: string,
  options: Omit<Described, 'unit'> & { fallback: boolean; productionFallback?: boolean },
): Setting<boolean> {
  return {
    doc: docOf(variable, String(options.fallback), { ...options, unit: 'boolean' }),
    schema: z
      .string()
      .toLowerCase()
      .refine((value) => TRUE.includes(value) || FALSE.includes(value), {
        error: (issue) => `${variable} must be true or false, got "${shown(issue.input)}"`,
      })
      .transform((value) => TRUE.includes(value)),
    fallback: options.fallback,
    ...(options.productionFallback === undefined ? {} : { productionFallback: options.productionFallback }),
  };
}

/** One of `values`, any case. */
export function choice<T extends string>(
  variable: string,
  values: readonly [T, ...T[]],
  options: Omit<Described, 'unit'> & { fallback: T; unit?: string },
): Setting<T> {
  return {
    doc: docOf(variable, options.fallback, { ...options, unit: options.unit ?? values.map((value) => `\`${value}\``).join(', ') }),
    schema: z
      .string()
      .toLowerCase()
      .pipe(z.enum(values, { error: (issue) => `${variable} must be one of ${values.join(', ')}, got "${shown(issue.input)}"` })),
    fallback: options.fallback,
  };
}

/** `on` or `off` (any case), read as true or false. */
export function onOff(variable: string, options: Omit<Described, 'unit'> & { fallback: boolean }): Setting<boolean> {
  const { schema } = choice(variable, ['on', 'off'], { ...options, fallback: options.fallback ? 'on' : 'off' });
  return {
    doc: docOf(variable, options.fallback ? 'on' : 'off', { ...options, unit: '`on`, `off`' }),
    schema: schema.transform((value) => value === 'on'),
    fallback: options.fallback,
  };
}

/** Text taken as it is; `fallback` null: unset means off. */
export function text<F extends string | null>(variable: string, options: Described & { fallback: F }): Setting<string | F> {
  return { doc: docOf(variable, options.fallback, options), schema: z.string(), fallback: options.fallback };
}

/** Read by a schema of its own (a URL, a list, a time zone); `shown`: the default as the docs show it. */
export function custom<T>(
  variable: string,
  schema: z.ZodType<T, string>,
  options: Described & { fallback: T; shown: string | null },
): Setting<T> {
  return { doc: docOf(variable, options.shown, options), schema, fallback: options.fallback };
}

const integerSchema = (variable: string, bounds: Bounded): z.ZodType<number, string> =>
  numberSchema(variable, /^\d+$/, `an integer from ${bounds.min} to ${bounds.max}`, bounds);

/** Written as `pattern`, from `min` to `max`; a problem says it must be `what`. */
function numberSchema(variable: string, pattern: RegExp, what: string, { min, max }: Bounded): z.ZodType<number, string> {
  const problem = (input: unknown): string => `${variable} must be ${what}, got "${shown(input)}"`;
  return z
    .string()
    .regex(pattern, { error: (issue) => problem(issue.input), abort: true })
    .refine((value) => Number(value) >= min && Number(value) <= max, { error: (issue) => problem(issue.input) })
    .transform(Number);
}

function docOf(variable: string, shown: string | null, { unit, doc }: Described): SettingDoc {
  return { variable, shown, unit, doc };
}
