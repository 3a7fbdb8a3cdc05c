// A statistic row's value read for people ("United States" for "US:United States", a language's name by
// Node's Intl, "Direct" for an empty referrer, an event's parts). A value of another shape keeps its text
// as the label, and its parts are null.
import type { StatName } from '../domain.js';

export interface StatEvent {
  name: string;
  value: string | null;
  unit: string | null;
}

export interface ReadableValue {
  label: string;
  code: string | null;
  date: string | null;
  event: StatEvent | null;
}

const CODED = /^([A-Za-z]{2}):(.+)$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const LANGUAGE = /^[a-z]{2,3}$/i;

const plain = (value: string): ReadableValue => ({ label: value, code: null, date: null, event: null });

let languageNames: Intl.DisplayNames | undefined;

function languageName(code: string): string | null {
  languageNames ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  try {
    return languageNames.of(code.toLowerCase()) ?? null;
  } catch {
    return null;
  }
}

export function readValue(name: StatName, value: string): ReadableValue {
  switch (name) {
    case 'country':
    case 'continent':
    case 'city': {
      const match = CODED.exec(value);
      return match ? { label: match[2] ?? value, code: (match[1] ?? '').toUpperCase(), date: null, event: null } : plain(value);
    }
    case 'language': {
      const label = LANGUAGE.test(value) ? languageName(value) : null;
      return label === null ? plain(value) : { label, code: value.toLowerCase(), date: null, event: null };
    }
    case 'referrer':
      return value.trim() === '' ? plain('Direct') : plain(value);
    case 'event': {
      const parts = value.split(':');
      const [eventName, eventValue, unit] = parts;
      if (parts.length !== 3 || eventName === undefined || eventName === '') return plain(value);
      return { label: eventName, code: null, date: null, event: { name: eventName, value: eventValue || null, unit: unit || null } };
    }
    case 'visitor':
    case 'pageview':
      return DAY.test(value) ? { label: value, code: null, date: value, event: null } : plain(value);
    default:
      return plain(value);
  }
}
