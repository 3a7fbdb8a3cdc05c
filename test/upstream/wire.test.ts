// Unit tests of the wire decoders (src/upstream/wire.ts) against docs/CONTRACT.md part B:
// every tolerated variation gives an exact domain value, every rejection a WireDecodeError naming the path.
import { describe, expect, it } from 'vitest';
import type { Deletion, Page, PageRequest, Stat, UpstreamErrorBody, Website } from '../../src/domain.js';
import { WireDecodeError } from '../../src/upstream/errors.js';
import {
  decodeDeletion,
  decodeErrorBody,
  decodeStatPage,
  decodeWebsite,
  decodeWebsiteEnvelope,
  decodeWebsitePage,
} from '../../src/upstream/wire.js';

type Json = Record<string, unknown>;

/** The website of docs/CONTRACT.md part B, as the wire carries it. */
const WIRE_WEBSITE: Json = Object.freeze({
  id: 1,
  domain: 'example.com',
  privacy: 0,
  email: 0,
  password: false,
  exclude_bots: 1,
  exclude_params: null,
  exclude_ips: null,
  favorite: 0,
  created_at: '2024-05-01T10:00:00.000000Z',
  updated_at: '2024-05-02 11:30:15',
});

const DECODED_WEBSITE: Website = Object.freeze({
  id: '1',
  domain: 'example.com',
  privacy: 'PUBLIC',
  passwordProtected: false,
  emailReports: false,
  excludeBots: true,
  excludeParams: [],
  excludeIps: [],
  favorite: false,
  createdAt: '2024-05-01T10:00:00.000Z',
  updatedAt: '2024-05-02T11:30:15.000Z',
});

/** The wire website with some fields replaced; a field set to `undefined` is left out entirely. */
function wire(overrides: Json = {}): Json {
  const website: Json = { ...WIRE_WEBSITE, ...overrides };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete website[key];
  }
  return website;
}

const decoded = (overrides: Partial<Website> = {}): Website => ({ ...DECODED_WEBSITE, ...overrides });

/** Runs `run`, requires a WireDecodeError and returns its message. */
function wireError(run: () => unknown): string {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(WireDecodeError);
  expect(caught).toBeInstanceOf(Error);
  expect((caught as Error).name).toBe('WireDecodeError');
  return (caught as Error).message;
}

/** `count` stat rows `{value: "v1", count: "1"}`, ... as the wire sends them (SUM counts as strings). */
function statRows(count: number): Json[] {
  return Array.from({ length: count }, (_, index) => ({ value: `v${index + 1}`, count: String(index + 1) }));
}

function decodedStats(count: number): Stat[] {
  return Array.from({ length: count }, (_, index) => ({ value: `v${index + 1}`, count: index + 1 }));
}

describe('WireDecodeError', () => {
  it('is an Error with its own name and the given message', () => {
    const error = new WireDecodeError('data[1].count: expected a non-negative integer, got "x"');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(WireDecodeError);
    expect(error.name).toBe('WireDecodeError');
    expect(error.message).toBe('data[1].count: expected a non-negative integer, got "x"');
    expect(String(error)).toBe('WireDecodeError: data[1].count: expected a non-negative integer, got "x"');
    expect(typeof error.stack).toBe('string');
  });

  it('is what the decoders throw', () => {
    expect(() => decodeWebsite(null)).toThrow(WireDecodeError);
    expect(() => decodeWebsiteEnvelope(null)).toThrow(WireDecodeError);
    expect(() => decodeWebsitePage(null, { page: 1, perPage: 10 })).toThrow(WireDecodeError);
    expect(() => decodeStatPage(null, { page: 1, perPage: 10 })).toThrow(WireDecodeError);
    expect(() => decodeDeletion(null, '1')).toThrow(WireDecodeError);
  });
});

describe('decodeWebsite', () => {
  it('decodes the website of docs/CONTRACT.md part B', () => {
    expect(decodeWebsite(wire())).toEqual(DECODED_WEBSITE);
  });

  it('decodes a website whose numbers and flags all arrive as strings', () => {
    const raw = {
      id: '42',
      domain: 'shop.example.org',
      privacy: '2',
      email: '1',
      password: 'true',
      exclude_bots: '0',
      exclude_params: 'utm_source\r\nutm_medium\r\n',
      exclude_ips: ['10.0.0.1', '192.168.1.1'],
      favorite: '1',
      created_at: '2023-12-31 23:59:59',
      updated_at: '2024-01-01T00:00:00.999999Z',
    };
    expect(decodeWebsite(raw)).toEqual({
      id: '42',
      domain: 'shop.example.org',
      privacy: 'PASSWORD',
      passwordProtected: true,
      emailReports: true,
      excludeBots: false,
      excludeParams: ['utm_source', 'utm_medium'],
      excludeIps: ['10.0.0.1', '192.168.1.1'],
      favorite: true,
      createdAt: '2023-12-31T23:59:59.000Z',
      updatedAt: '2024-01-01T00:00:00.999Z',
    } satisfies Website);
  });

  it('ignores fields it does not know', () => {
    expect(decodeWebsite(wire({ user_id: 9, object: 'website', extra: { nested: [1] } }))).toEqual(DECODED_WEBSITE);
  });

  it('returns exactly the domain fields, with fresh arrays', () => {
    const raw = wire({ exclude_ips: ['1.1.1.1'] });
    const website = decodeWebsite(raw);
    expect(Object.keys(website).sort()).toEqual(
      [
        'createdAt',
        'domain',
        'emailReports',
        'excludeBots',
        'excludeIps',
        'excludeParams',
        'favorite',
        'id',
        'passwordProtected',
        'privacy',
        'updatedAt',
      ].sort(),
    );
    expect(website.excludeIps).not.toBe(raw.exclude_ips);
  });

  describe('id', () => {
    it.each<[unknown, string]>([
      [1, '1'],
      ['1', '1'],
      [12, '12'],
      ['12', '12'],
      ['12.0', '12'],
      ['12.00', '12'],
      ['007', '7'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
      ['9007199254740991', '9007199254740991'],
    ])('%j -> %j', (id, expected) => {
      expect(decodeWebsite(wire({ id }))).toEqual(decoded({ id: expected }));
    });

    it.each<[unknown, string]>([
      [0, 'id: expected a positive integer, got 0'],
      ['0', 'id: expected a positive integer, got "0"'],
      ['0.0', 'id: expected a positive integer, got "0.0"'],
      [-0, 'id: expected a positive integer, got 0'],
      [-1, 'id: expected a positive integer, got -1'],
      ['-1', 'id: expected a positive integer, got "-1"'],
      ['+1', 'id: expected a positive integer, got "+1"'],
      [1.5, 'id: expected a positive integer, got 1.5'],
      ['1.5', 'id: expected a positive integer, got "1.5"'],
      ['12.', 'id: expected a positive integer, got "12."'],
      ['1e3', 'id: expected a positive integer, got "1e3"'],
      ['0x10', 'id: expected a positive integer, got "0x10"'],
      [' 1', 'id: expected a positive integer, got " 1"'],
      ['1 ', 'id: expected a positive integer, got "1 "'],
      ['', 'id: expected a positive integer, got ""'],
      ['abc', 'id: expected a positive integer, got "abc"'],
      [9007199254740992, 'id: expected a positive integer, got 9007199254740992'],
      ['9007199254740992', 'id: expected a positive integer, got "9007199254740992"'],
      ['99999999999999999999', 'id: expected a positive integer, got "99999999999999999999"'],
      [Number.POSITIVE_INFINITY, 'id: expected a positive integer, got Infinity'],
      [Number.NaN, 'id: expected a positive integer, got NaN'],
      [true, 'id: expected a positive integer, got true'],
      [null, 'id: expected a positive integer, got null'],
      [undefined, 'id: expected a positive integer, got nothing'],
      [[1], 'id: expected a positive integer, got an array'],
      [{ id: 1 }, 'id: expected a positive integer, got an object'],
    ])('rejects %j', (id, message) => {
      expect(wireError(() => decodeWebsite(wire({ id })))).toBe(message);
    });

    it('shows at most 40 characters of an upstream string', () => {
      expect(wireError(() => decodeWebsite(wire({ id: 'x'.repeat(40) })))).toBe(`id: expected a positive integer, got "${'x'.repeat(40)}"`);
      expect(wireError(() => decodeWebsite(wire({ id: `${'y'.repeat(40)}TAIL` })))).toBe(
        `id: expected a positive integer, got "${'y'.repeat(40)}…"`,
      );
    });
  });

  describe('domain', () => {
    it.each(['example.com', 'sub.example.co.uk', '192.168.0.1', 'xn--bcher-kva.example'])('keeps %j', (domain) => {
      expect(decodeWebsite(wire({ domain }))).toEqual(decoded({ domain }));
    });

    it.each<[unknown, string]>([
      ['', 'domain: expected a non-empty string, got ""'],
      ['   ', 'domain: expected a non-empty string, got "   "'],
      ['\n', 'domain: expected a non-empty string, got "\\n"'],
      [5, 'domain: expected a non-empty string, got 5'],
      [true, 'domain: expected a non-empty string, got true'],
      [null, 'domain: expected a non-empty string, got null'],
      [undefined, 'domain: expected a non-empty string, got nothing'],
      [['example.com'], 'domain: expected a non-empty string, got an array'],
      [{}, 'domain: expected a non-empty string, got an object'],
    ])('rejects %j', (domain, message) => {
      expect(wireError(() => decodeWebsite(wire({ domain })))).toBe(message);
    });
  });

  describe('privacy', () => {
    it.each<[unknown, Website['privacy']]>([
      [0, 'PUBLIC'],
      [1, 'PRIVATE'],
      [2, 'PASSWORD'],
      ['0', 'PUBLIC'],
      ['1', 'PRIVATE'],
      ['2', 'PASSWORD'],
      [null, 'PUBLIC'], // part C: a create without privacy stores NULL, which the install treats as public
    ])('%j -> %s', (privacy, expected) => {
      expect(decodeWebsite(wire({ privacy }))).toEqual(decoded({ privacy: expected }));
    });

    it.each<[unknown, string]>([
      [3, 'privacy: expected a privacy code (0, 1 or 2), got 3'],
      ['3', 'privacy: expected a privacy code (0, 1 or 2), got "3"'],
      [-1, 'privacy: expected a privacy code (0, 1 or 2), got -1'],
      [1.5, 'privacy: expected a privacy code (0, 1 or 2), got 1.5'],
      ['PUBLIC', 'privacy: expected a privacy code (0, 1 or 2), got "PUBLIC"'],
      ['', 'privacy: expected a privacy code (0, 1 or 2), got ""'],
      [true, 'privacy: expected a privacy code (0, 1 or 2), got true'],
      [false, 'privacy: expected a privacy code (0, 1 or 2), got false'],
      [undefined, 'privacy: expected a privacy code (0, 1 or 2), got nothing'],
      [[0], 'privacy: expected a privacy code (0, 1 or 2), got an array'],
    ])('rejects %j', (privacy, message) => {
      expect(wireError(() => decodeWebsite(wire({ privacy })))).toBe(message);
    });
  });

  describe('flags', () => {
    // When the field is missing: a required flag is refused, `password` reads as "none set", and
    // `favorite` as null, since an install without favorites never sends it.
    const FLAGS = [
      { wireField: 'email', field: 'emailReports', missing: 'refused' },
      { wireField: 'exclude_bots', field: 'excludeBots', missing: 'refused' },
      { wireField: 'password', field: 'passwordProtected', missing: false },
      { wireField: 'favorite', field: 'favorite', missing: null },
    ] as const;

    const ACCEPTED: [unknown, boolean][] = [
      [true, true],
      [1, true],
      ['1', true],
      ['true', true],
      [false, false],
      [0, false],
      ['0', false],
      ['false', false],
      [null, false],
    ];

    const REJECTED: [unknown, string][] = [
      [2, '2'],
      [-1, '-1'],
      [0.5, '0.5'],
      ['2', '"2"'],
      ['yes', '"yes"'],
      ['no', '"no"'],
      ['on', '"on"'],
      ['TRUE', '"TRUE"'],
      ['False', '"False"'],
      ['', '""'],
      [' 1', '" 1"'],
      ['1.0', '"1.0"'],
      [[1], 'an array'],
      [{}, 'an object'],
    ];

    describe.each(FLAGS)('$wireField -> $field', ({ wireField, field, missing }) => {
      it.each(ACCEPTED)('%j -> %j', (value, expected) => {
        expect(decodeWebsite(wire({ [wireField]: value }))).toEqual(decoded({ [field]: expected }));
      });

      it.each(REJECTED)('rejects %j', (value, shown) => {
        expect(wireError(() => decodeWebsite(wire({ [wireField]: value })))).toBe(
          `${wireField}: expected a flag (0/1 or true/false), got ${shown}`,
        );
      });

      if (missing !== 'refused') {
        it(`missing -> ${String(missing)}`, () => {
          expect(decodeWebsite(wire({ [wireField]: undefined }))).toEqual(decoded({ [field]: missing }));
        });
      } else {
        it('rejects a missing field', () => {
          expect(wireError(() => decodeWebsite(wire({ [wireField]: undefined })))).toBe(
            `${wireField}: expected a flag (0/1 or true/false), got nothing`,
          );
        });
      }
    });

    it('reads each flag from its own field', () => {
      expect(decodeWebsite(wire({ email: 1, exclude_bots: 0, password: 0, favorite: 0 }))).toEqual(
        decoded({ emailReports: true, excludeBots: false, passwordProtected: false, favorite: false }),
      );
      expect(decodeWebsite(wire({ email: 0, exclude_bots: 0, password: true, favorite: 0 }))).toEqual(
        decoded({ emailReports: false, excludeBots: false, passwordProtected: true, favorite: false }),
      );
      expect(decodeWebsite(wire({ email: 0, exclude_bots: 0, password: false, favorite: 'true' }))).toEqual(
        decoded({ emailReports: false, excludeBots: false, passwordProtected: false, favorite: true }),
      );
    });

    it('never exposes a password value, only whether one is set', () => {
      const website = decodeWebsite(wire({ password: true, privacy: 2 }));
      expect(website).toEqual(decoded({ passwordProtected: true, privacy: 'PASSWORD' }));
      expect(JSON.stringify(website)).not.toContain('"password"');
    });
  });

  describe('lists', () => {
    const LISTS = [
      { wireField: 'exclude_params', field: 'excludeParams' },
      { wireField: 'exclude_ips', field: 'excludeIps' },
    ] as const;

    const ACCEPTED: [string, unknown, string[]][] = [
      ['null', null, []],
      ['an empty string', '', []],
      ['blank lines only', ' \n\r\n\t\n', []],
      ['one entry', '10.0.0.1', ['10.0.0.1']],
      ['\\n-separated', 'a\nb\nc', ['a', 'b', 'c']],
      ['\\r\\n-separated', 'a\r\nb\r\nc', ['a', 'b', 'c']],
      ['mixed separators and a trailing newline', 'a\r\nb\nc\r\n', ['a', 'b', 'c']],
      ['padded entries and empty lines', '  a  \n\n\t b \r\n\r\n', ['a', 'b']],
      ['an empty array', [], []],
      ['an array', ['utm_source', 'utm_medium'], ['utm_source', 'utm_medium']],
      ['an array with padded and empty entries', [' a ', '', '  ', 'b\r'], ['a', 'b']],
      ['an array whose entries hold several lines', ['a\nb', 'c\r\nd'], ['a', 'b', 'c', 'd']],
      ['duplicates, kept as sent', 'a\na', ['a', 'a']],
    ];

    describe.each(LISTS)('$wireField -> $field', ({ wireField, field }) => {
      it.each(ACCEPTED)('%s', (_, value, expected) => {
        expect(decodeWebsite(wire({ [wireField]: value }))).toEqual(decoded({ [field]: expected }));
      });

      it('missing -> null (not reported by this install)', () => {
        expect(decodeWebsite(wire({ [wireField]: undefined }))).toEqual(decoded({ [field]: null }));
      });

      it.each<[unknown, string]>([
        [5, `${wireField}: expected a newline-separated string or a list of strings, got 5`],
        [0, `${wireField}: expected a newline-separated string or a list of strings, got 0`],
        [true, `${wireField}: expected a newline-separated string or a list of strings, got true`],
        [false, `${wireField}: expected a newline-separated string or a list of strings, got false`],
        [{ 0: 'a' }, `${wireField}: expected a newline-separated string or a list of strings, got an object`],
        [[5], `${wireField}[0]: expected a string, got 5`],
        [['a', null], `${wireField}[1]: expected a string, got null`],
        [['a', 'b', ['c']], `${wireField}[2]: expected a string, got an array`],
        [['a', { ip: 'b' }], `${wireField}[1]: expected a string, got an object`],
      ])('rejects %j', (value, message) => {
        expect(wireError(() => decodeWebsite(wire({ [wireField]: value })))).toBe(message);
      });
    });

    it('reads each list from its own field', () => {
      expect(decodeWebsite(wire({ exclude_params: 'ref', exclude_ips: '1.2.3.4\r\n5.6.7.8' }))).toEqual(
        decoded({ excludeParams: ['ref'], excludeIps: ['1.2.3.4', '5.6.7.8'] }),
      );
    });
  });

  describe('timestamps', () => {
    const READABLE: [string, string][] = [
      ['2024-05-01T10:00:00.000000Z', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01T10:00:00.123456Z', '2024-05-01T10:00:00.123Z'],
      ['2024-05-01T10:00:00.999999Z', '2024-05-01T10:00:00.999Z'],
      ['2024-05-01T10:00:00.5Z', '2024-05-01T10:00:00.500Z'],
      ['2024-05-01T10:00:00.12Z', '2024-05-01T10:00:00.120Z'],
      ['2024-05-01T10:00:00.123Z', '2024-05-01T10:00:00.123Z'],
      ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01T10:00Z', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01T10:00:00', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01 10:00:00', '2024-05-01T10:00:00.000Z'],
      ['2024-05-02 11:30:15', '2024-05-02T11:30:15.000Z'],
      ['2023-12-31 23:59:59', '2023-12-31T23:59:59.000Z'],
      ['2024-02-29 12:00:00', '2024-02-29T12:00:00.000Z'],
      ['2024-05-01 10:00:00.250000', '2024-05-01T10:00:00.250Z'],
      ['2024-05-01', '2024-05-01T00:00:00.000Z'],
      ['2024-05-01T10:00:00+00:00', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01T10:00:00-00:00', '2024-05-01T10:00:00.000Z'],
      ['2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00.000Z'],
      ['2024-05-01T10:00:00+0200', '2024-05-01T08:00:00.000Z'],
      ['2024-05-01T10:00:00+02', '2024-05-01T08:00:00.000Z'],
      ['2024-05-01T01:00:00-05:30', '2024-05-01T06:30:00.000Z'],
      ['2024-05-01T00:30:00+01:00', '2024-04-30T23:30:00.000Z'],
      ['2024-12-31T23:30:00-01:00', '2025-01-01T00:30:00.000Z'],
      ['2024-05-01T10:00:00.000000+05:45', '2024-05-01T04:15:00.000Z'],
      ['0999-01-01 00:00:00', '0999-01-01T00:00:00.000Z'],
    ];

    const UNREADABLE: [string, unknown][] = [
      ['null', null],
      ['missing', undefined],
      ['a number', 1714557600],
      ['a boolean', true],
      ['an object', { date: '2024-05-01 10:00:00' }],
      ['an array', ['2024-05-01']],
      ['an empty string', ''],
      ['words', 'yesterday'],
      ['an English date', 'May 1, 2024'],
      ['slashes', '2024/05/01'],
      ['unpadded parts', '2024-5-1 10:00:00'],
      ['leading space', ' 2024-05-01 10:00:00'],
      ['trailing space', '2024-05-01 10:00:00 '],
      ['lower-case t and z', '2024-05-01t10:00:00z'],
      ['hour only', '2024-05-01T10Z'],
      ['a dot without fraction', '2024-05-01T10:00:00.Z'],
      ['a zone on a bare date', '2024-05-01Z'],
      ['month 13', '2024-13-01 00:00:00'],
      ['month 0', '2024-00-10 00:00:00'],
      ['day 0', '2024-05-00 00:00:00'],
      ['Feb 30', '2024-02-30 00:00:00'],
      ['Feb 29 of a common year', '2023-02-29 00:00:00'],
      ['April 31', '2024-04-31'],
      ['hour 24', '2024-05-01 24:00:00'],
      ['minute 60', '2024-05-01 10:60:00'],
      ['second 60', '2024-05-01 10:00:60'],
      ['offset hours 24', '2024-05-01T10:00:00+24:00'],
      ['offset minutes 60', '2024-05-01T10:00:00+02:60'],
      ['a two-digit-century year Date.UTC would move to 19xx', '0050-01-01 00:00:00'],
      ['a zero date', '0000-00-00 00:00:00'],
    ];

    describe.each([
      { wireField: 'created_at', field: 'createdAt' },
      { wireField: 'updated_at', field: 'updatedAt' },
    ] as const)('$wireField -> $field', ({ wireField, field }) => {
      it.each(READABLE)('%j -> %j', (value, expected) => {
        expect(decodeWebsite(wire({ [wireField]: value }))).toEqual(decoded({ [field]: expected }));
      });

      it.each(UNREADABLE)('%s -> null, not an error', (_, value) => {
        expect(decodeWebsite(wire({ [wireField]: value }))).toEqual(decoded({ [field]: null }));
      });
    });

    it('reads a timestamp met again (remembered) as the first time, also after more than are remembered', () => {
      const many = Array.from({ length: 3_000 }, (_, i) => new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString());
      for (let round = 0; round < 2; round++) {
        for (const [value, expected] of READABLE) expect(decodeWebsite(wire({ created_at: value })).createdAt).toBe(expected);
        for (const [, value] of UNREADABLE) expect(decodeWebsite(wire({ created_at: value })).createdAt).toBeNull();
        for (const value of many) expect(decodeWebsite(wire({ updated_at: value })).updatedAt).toBe(value);
      }
    });
  });

  describe('rejections of the body and ordering', () => {
    it.each<[unknown, string]>([
      [null, 'body: expected an object, got null'],
      [undefined, 'body: expected an object, got nothing'],
      ['example.com', 'body: expected an object, got "example.com"'],
      [1, 'body: expected an object, got 1'],
      [false, 'body: expected an object, got false'],
      [[WIRE_WEBSITE], 'body: expected an object, got an array'],
    ])('rejects %j', (raw, message) => {
      expect(wireError(() => decodeWebsite(raw))).toBe(message);
    });

    it('rejects an empty object at its first field', () => {
      expect(wireError(() => decodeWebsite({}))).toBe('id: expected a positive integer, got nothing');
    });

    it('names the first unreadable field in field order', () => {
      expect(wireError(() => decodeWebsite(wire({ domain: '', email: 5 })))).toBe('domain: expected a non-empty string, got ""');
      expect(wireError(() => decodeWebsite(wire({ email: 5, exclude_ips: 5 })))).toBe('email: expected a flag (0/1 or true/false), got 5');
    });
  });
});

describe('decodeWebsiteEnvelope', () => {
  it.each<[string, unknown]>([
    ['{data, status}', { data: WIRE_WEBSITE, status: 200 }],
    ['{data, status} with status as a string', { data: WIRE_WEBSITE, status: '200' }],
    ['{data} without status', { data: WIRE_WEBSITE }],
    ['a bare website', WIRE_WEBSITE],
    ['a bare website with status', { ...WIRE_WEBSITE, status: 200 }],
  ])('decodes %s', (_, body) => {
    expect(decodeWebsiteEnvelope(body)).toEqual(DECODED_WEBSITE);
  });

  it('decodes a tolerant website inside the envelope', () => {
    const body = {
      data: wire({
        id: '3',
        privacy: '1',
        email: 'true',
        exclude_bots: false,
        password: null,
        favorite: null,
        exclude_params: 'a\r\nb',
        exclude_ips: [],
        created_at: 'not a date',
        updated_at: null,
      }),
      status: 200,
    };
    expect(decodeWebsiteEnvelope(body)).toEqual(
      decoded({
        id: '3',
        privacy: 'PRIVATE',
        emailReports: true,
        excludeBots: false,
        passwordProtected: false,
        favorite: false,
        excludeParams: ['a', 'b'],
        excludeIps: [],
        createdAt: null,
        updatedAt: null,
      }),
    );
  });

  it.each<[unknown, string]>([
    [null, 'body: expected an object, got null'],
    [undefined, 'body: expected an object, got nothing'],
    ['<html><body>Server Error</body></html>', 'body: expected an object, got "<html><body>Server Error</body></html>"'],
    [[WIRE_WEBSITE], 'body: expected an object, got an array'],
    [42, 'body: expected an object, got 42'],
    [{ data: null, status: 200 }, 'data: expected an object, got null'],
    [{ data: [WIRE_WEBSITE] }, 'data: expected an object, got an array'],
    [{ data: 'x' }, 'data: expected an object, got "x"'],
    [{ data: {} }, 'data.id: expected a positive integer, got nothing'],
    [{ data: wire({ id: 'x' }) }, 'data.id: expected a positive integer, got "x"'],
    [{ data: wire({ domain: null }) }, 'data.domain: expected a non-empty string, got null'],
    [{ data: wire({ privacy: 9 }) }, 'data.privacy: expected a privacy code (0, 1 or 2), got 9'],
    [{ data: wire({ password: 'secret' }) }, 'data.password: expected a flag (0/1 or true/false), got "secret"'],
    [{ data: wire({ email: undefined }) }, 'data.email: expected a flag (0/1 or true/false), got nothing'],
    [{ data: wire({ exclude_bots: 2 }) }, 'data.exclude_bots: expected a flag (0/1 or true/false), got 2'],
    [{ data: wire({ favorite: 'yes' }) }, 'data.favorite: expected a flag (0/1 or true/false), got "yes"'],
    [{ data: wire({ exclude_params: 7 }) }, 'data.exclude_params: expected a newline-separated string or a list of strings, got 7'],
    [{ data: wire({ exclude_ips: ['a', 1] }) }, 'data.exclude_ips[1]: expected a string, got 1'],
    [wire({ id: 0 }), 'id: expected a positive integer, got 0'],
    [{ status: 200 }, 'id: expected a positive integer, got nothing'],
    [{ message: 'Server Error' }, 'id: expected a positive integer, got nothing'],
  ])('rejects %j', (body, message) => {
    expect(wireError(() => decodeWebsiteEnvelope(body))).toBe(message);
  });
});

describe('decodeWebsitePage', () => {
  const SECOND: Json = wire({
    id: '2',
    domain: 'second.example',
    privacy: '2',
    email: '1',
    password: 1,
    exclude_bots: '0',
    exclude_params: 'ref\r\nutm_source',
    exclude_ips: ['1.2.3.4'],
    favorite: true,
    created_at: '2024-06-01 08:00:00',
    updated_at: '2024-06-01T08:00:00.000000Z',
  });
  const SECOND_DECODED: Website = decoded({
    id: '2',
    domain: 'second.example',
    privacy: 'PASSWORD',
    emailReports: true,
    passwordProtected: true,
    excludeBots: false,
    excludeParams: ['ref', 'utm_source'],
    excludeIps: ['1.2.3.4'],
    favorite: true,
    createdAt: '2024-06-01T08:00:00.000Z',
    updatedAt: '2024-06-01T08:00:00.000Z',
  });

  it('decodes a full Laravel paginated resource', () => {
    const body = {
      data: [WIRE_WEBSITE, SECOND],
      links: {
        first: 'https://analytics.example/api/v1/websites?page=1',
        last: 'https://analytics.example/api/v1/websites?page=3',
        prev: 'https://analytics.example/api/v1/websites?page=1',
        next: 'https://analytics.example/api/v1/websites?page=3',
      },
      meta: {
        current_page: 2,
        from: 3,
        last_page: 3,
        path: 'https://analytics.example/api/v1/websites',
        per_page: 2,
        to: 4,
        total: 5,
      },
      status: 200,
    };
    expect(decodeWebsitePage(body, { page: 2, perPage: 2 })).toEqual({
      nodes: [DECODED_WEBSITE, SECOND_DECODED],
      totalCount: 5,
      page: 2,
      perPage: 2,
      lastPage: 3,
      hasNextPage: true,
    } satisfies Page<Website>);
  });

  it('decodes a bare array of websites', () => {
    expect(decodeWebsitePage([SECOND], { page: 1, perPage: 10 })).toEqual({
      nodes: [SECOND_DECODED],
      totalCount: 1,
      page: 1,
      perPage: 10,
      lastPage: 1,
      hasNextPage: false,
    } satisfies Page<Website>);
  });

  it.each<[unknown, string]>([
    [{ data: [WIRE_WEBSITE, wire({ domain: '' })] }, 'data[1].domain: expected a non-empty string, got ""'],
    [{ data: [wire({ id: '1.5' })] }, 'data[0].id: expected a positive integer, got "1.5"'],
    [{ data: [WIRE_WEBSITE, WIRE_WEBSITE, null] }, 'data[2]: expected an object, got null'],
    [{ data: [wire({ exclude_ips: ['a', 'b', null] })] }, 'data[0].exclude_ips[2]: expected a string, got null'],
    [{ data: [wire({ favorite: 3 })] }, 'data[0].favorite: expected a flag (0/1 or true/false), got 3'],
    [[WIRE_WEBSITE, wire({ privacy: 'secret' })], 'body[1].privacy: expected a privacy code (0, 1 or 2), got "secret"'],
    [['example.com'], 'body[0]: expected an object, got "example.com"'],
    [{ data: WIRE_WEBSITE }, 'data: expected an array, got an object'],
    [WIRE_WEBSITE, 'data: expected an array, got nothing'],
    [null, 'body: expected an object, got null'],
  ])('rejects %j', (body, message) => {
    expect(wireError(() => decodeWebsitePage(body, { page: 1, perPage: 10 }))).toBe(message);
  });
});

describe('decodeStatPage', () => {
  describe('rows', () => {
    it.each<[string, Json, Stat]>([
      ['country', { value: 'US:United States', count: 12 }, { value: 'US:United States', count: 12 }],
      ['count as a string', { value: 'EU:Europe', count: '12' }, { value: 'EU:Europe', count: 12 }],
      ['count as a SUM string "12.0"', { value: 'US:New York, NY', count: '12.0' }, { value: 'US:New York, NY', count: 12 }],
      ['count as "12.00"', { value: 'en', count: '12.00' }, { value: 'en', count: 12 }],
      ['count 0', { value: 'Firefox', count: 0 }, { value: 'Firefox', count: 0 }],
      ['count "0"', { value: 'Linux', count: '0' }, { value: 'Linux', count: 0 }],
      ['count "0.0"', { value: 'Desktop', count: '0.0' }, { value: 'Desktop', count: 0 }],
      ['the largest safe count', { value: 'a', count: '9007199254740991' }, { value: 'a', count: 9007199254740991 }],
      ['a day', { value: '2024-05-01', count: '3' }, { value: '2024-05-01', count: 3 }],
      ['an event with empty parts', { value: 'signup::', count: 1 }, { value: 'signup::', count: 1 }],
      ['an event', { value: 'purchase:49.90:EUR', count: 2 }, { value: 'purchase:49.90:EUR', count: 2 }],
      ['a page', { value: '/pricing?plan=pro', count: 4 }, { value: '/pricing?plan=pro', count: 4 }],
      ['a screen resolution', { value: '1920x1080', count: 5 }, { value: '1920x1080', count: 5 }],
      ['an empty value', { value: '', count: 1 }, { value: '', count: 1 }],
      ['a value kept verbatim', { value: '  padded  ', count: 1 }, { value: '  padded  ', count: 1 }],
      ['a numeric value', { value: 2024, count: 1 }, { value: '2024', count: 1 }],
      ['a zero value', { value: 0, count: 1 }, { value: '0', count: 1 }],
      ['a fractional value', { value: 1.5, count: 1 }, { value: '1.5', count: 1 }],
      ['unknown fields', { value: 'x', count: 1, website_id: 9, date: '2024-05-01' }, { value: 'x', count: 1 }],
    ])('%s', (_, row, expected) => {
      const page = decodeStatPage({ data: [row] }, { page: 1, perPage: 10 });
      expect(page.nodes).toEqual([expected]);
    });

    it('turns a -0 count into 0', () => {
      const page = decodeStatPage(JSON.parse('{"data":[{"value":"a","count":-0}]}'), { page: 1, perPage: 10 });
      expect(Object.is(page.nodes[0]?.count, 0)).toBe(true);
    });

    it.each<[unknown, string]>([
      [-1, 'data[0].count: expected a non-negative integer, got -1'],
      ['-1', 'data[0].count: expected a non-negative integer, got "-1"'],
      [1.5, 'data[0].count: expected a non-negative integer, got 1.5'],
      ['1.5', 'data[0].count: expected a non-negative integer, got "1.5"'],
      ['12.01', 'data[0].count: expected a non-negative integer, got "12.01"'],
      ['1,000', 'data[0].count: expected a non-negative integer, got "1,000"'],
      ['', 'data[0].count: expected a non-negative integer, got ""'],
      ['many', 'data[0].count: expected a non-negative integer, got "many"'],
      ['9007199254740992', 'data[0].count: expected a non-negative integer, got "9007199254740992"'],
      [true, 'data[0].count: expected a non-negative integer, got true'],
      [null, 'data[0].count: expected a non-negative integer, got null'],
      [undefined, 'data[0].count: expected a non-negative integer, got nothing'],
      [[1], 'data[0].count: expected a non-negative integer, got an array'],
    ])('rejects count %j', (count, message) => {
      const row: Json = { value: 'a' };
      if (count !== undefined) row.count = count;
      expect(wireError(() => decodeStatPage({ data: [row] }, { page: 1, perPage: 10 }))).toBe(message);
    });

    it.each<[unknown, string]>([
      [null, 'data[0].value: expected a string or a number, got null'],
      [undefined, 'data[0].value: expected a string or a number, got nothing'],
      [true, 'data[0].value: expected a string or a number, got true'],
      [['US'], 'data[0].value: expected a string or a number, got an array'],
      [{ code: 'US' }, 'data[0].value: expected a string or a number, got an object'],
    ])('rejects value %j', (value, message) => {
      const row: Json = { count: 1 };
      if (value !== undefined) row.value = value;
      expect(wireError(() => decodeStatPage({ data: [row] }, { page: 1, perPage: 10 }))).toBe(message);
    });

    it.each<[string, unknown, string]>([
      [
        'a bad count in the second row',
        {
          data: [
            { value: 'a', count: 1 },
            { value: 'b', count: 'x' },
          ],
        },
        'data[1].count: expected a non-negative integer, got "x"',
      ],
      ['a row that is not an object', { data: [...statRows(2), 'row'] }, 'data[2]: expected an object, got "row"'],
      ['a null row', { data: [null] }, 'data[0]: expected an object, got null'],
      ['a row that is an array', { data: [['a', 1]] }, 'data[0]: expected an object, got an array'],
      [
        'a bad row in a bare array',
        [
          { value: 'a', count: 1 },
          { value: 'b', count: -2 },
        ],
        'body[1].count: expected a non-negative integer, got -2',
      ],
      ['a bad value in a bare array', [{ count: 1 }], 'body[0].value: expected a string or a number, got nothing'],
      [
        'a bad row before a bad meta',
        { data: [{ value: 'a', count: 'x' }], meta: { current_page: 0 } },
        'data[0].count: expected a non-negative integer, got "x"',
      ],
    ])('rejects %s', (_, body, message) => {
      expect(wireError(() => decodeStatPage(body, { page: 1, perPage: 10 }))).toBe(message);
    });
  });

  describe('pagination', () => {
    const LAST = (page: number | string): string => `https://analytics.example/api/v1/stats/1?name=country&page=${page}`;

    interface Case {
      name: string;
      body: unknown;
      requested: PageRequest;
      expected: Omit<Page<Stat>, 'nodes'>;
      rows: number;
    }

    const PLAIN_LINKS = [
      { url: null, label: '&laquo; Previous', active: false },
      { url: 'http://install.test/api/v1/stats/1?page=1', label: '1', active: true },
      { url: 'http://install.test/api/v1/stats/1?page=2', label: '2', active: false },
      { url: 'http://install.test/api/v1/stats/1?page=2', label: 'Next &raquo;', active: false },
    ];

    const CASES: Case[] = [
      // Laravel's plain paginator (docs/CONTRACT.md part C): paging beside `data`, `links` an array
      {
        name: 'plain paginator as the older install sends it',
        body: {
          current_page: 1,
          data: statRows(10),
          first_page_url: 'http://install.test/api/v1/stats/1?page=1',
          from: 1,
          last_page: 3,
          last_page_url: 'http://install.test/api/v1/stats/1?page=3',
          links: PLAIN_LINKS,
          next_page_url: 'http://install.test/api/v1/stats/1?page=2',
          path: 'http://install.test/api/v1/stats/1',
          per_page: '10',
          prev_page_url: null,
          to: 10,
          total: 27,
          status: 200,
        },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 27, page: 1, perPage: 10, lastPage: 3, hasNextPage: true },
      },
      {
        name: 'plain paginator, last page, numbers as strings',
        body: {
          current_page: '3',
          data: statRows(7),
          last_page: '3',
          per_page: '10',
          total: '27',
          next_page_url: null,
          links: PLAIN_LINKS,
        },
        requested: { page: 3, perPage: 10 },
        rows: 7,
        expected: { totalCount: 27, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'plain paginator without last_page: next and last page URLs',
        body: { current_page: 2, data: statRows(10), per_page: 10, next_page_url: '/x?page=3', last_page_url: '/x?page=4' },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 20, page: 2, perPage: 10, lastPage: 4, hasNextPage: true },
      },
      {
        name: 'plain paginator, empty page past the end',
        body: { current_page: 5, data: [], from: null, to: null, last_page: 3, per_page: '10', total: 27, links: [] },
        requested: { page: 5, perPage: 10 },
        rows: 0,
        expected: { totalCount: 27, page: 5, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'data with only an array of links: nothing to page by but the rows',
        body: { data: statRows(4), links: PLAIN_LINKS },
        requested: { page: 1, perPage: 10 },
        rows: 4,
        expected: { totalCount: 4, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'unknown extra fields are ignored',
        body: { data: statRows(2), meta: { current_page: 1, last_page: 1, per_page: 10, total: 2, extra: [1] }, sql: 'x', took: 3 },
        requested: { page: 1, perPage: 10 },
        rows: 2,
        expected: { totalCount: 2, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      // meta present
      {
        name: 'meta with numbers',
        body: { data: statRows(10), meta: { current_page: 2, last_page: 5, per_page: 10, total: 45, from: 11, to: 20 } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 45, page: 2, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      {
        name: 'meta with numeric strings',
        body: { data: statRows(10), meta: { current_page: '2', last_page: '5', per_page: '10', total: '45' } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 45, page: 2, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      {
        name: 'meta with "N.0" strings',
        body: { data: statRows(10), meta: { current_page: '2.0', last_page: '5.0', per_page: '10.00', total: '45.0' } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 45, page: 2, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      {
        name: 'meta on the last page',
        body: { data: statRows(5), meta: { current_page: 5, last_page: 5, per_page: 10, total: 45 } },
        requested: { page: 5, perPage: 10 },
        rows: 5,
        expected: { totalCount: 45, page: 5, perPage: 10, lastPage: 5, hasNextPage: false },
      },
      {
        name: 'meta beyond the last page',
        body: { data: [], meta: { current_page: 7, last_page: 5, per_page: 10, total: 45 } },
        requested: { page: 7, perPage: 10 },
        rows: 0,
        expected: { totalCount: 45, page: 7, perPage: 10, lastPage: 5, hasNextPage: false },
      },
      {
        name: 'meta of an empty list (last_page 1)',
        body: { data: [], meta: { current_page: 1, last_page: 1, per_page: 10, total: 0, from: null, to: null } },
        requested: { page: 1, perPage: 10 },
        rows: 0,
        expected: { totalCount: 0, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'meta of an empty list with last_page 0',
        body: { data: [], meta: { current_page: 1, last_page: 0, per_page: 10, total: 0 } },
        requested: { page: 1, perPage: 10 },
        rows: 0,
        expected: { totalCount: 0, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'meta wins over what was requested',
        body: { data: statRows(3), meta: { current_page: 3, last_page: 3, per_page: 25, total: 53 } },
        requested: { page: 2, perPage: 10 },
        rows: 3,
        expected: { totalCount: 53, page: 3, perPage: 25, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'meta wins over links',
        body: {
          data: statRows(10),
          meta: { current_page: 1, last_page: 5, per_page: 10, total: 50 },
          links: { first: LAST(1), last: LAST(9), prev: null, next: null },
        },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 50, page: 1, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      {
        name: 'meta.last_page makes unreadable links irrelevant',
        body: { data: statRows(2), meta: { last_page: 1 }, links: { next: 5, last: true } },
        requested: { page: 1, perPage: 10 },
        rows: 2,
        expected: { totalCount: 2, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'meta with null fields falls back to what was requested and arrived',
        body: { data: statRows(4), meta: { current_page: null, last_page: null, per_page: null, total: null } },
        requested: { page: 3, perPage: 10 },
        rows: 4,
        expected: { totalCount: 24, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'empty meta falls back to what was requested and arrived',
        body: { data: statRows(10), meta: {} },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 2, hasNextPage: true },
      },
      {
        name: 'meta with only per_page: a full page of that size may have a next one',
        body: { data: statRows(25), meta: { per_page: '25' } },
        requested: { page: 2, perPage: 10 },
        rows: 25,
        expected: { totalCount: 50, page: 2, perPage: 25, lastPage: 3, hasNextPage: true },
      },
      {
        name: 'meta with only total',
        body: { data: statRows(3), meta: { total: '103' } },
        requested: { page: 1, perPage: 10 },
        rows: 3,
        expected: { totalCount: 103, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'meta without last_page, links give it',
        body: {
          data: statRows(10),
          meta: { current_page: 2, per_page: 10, total: 45 },
          links: { first: LAST(1), last: LAST(5), prev: LAST(1), next: LAST(3) },
        },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 45, page: 2, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      // links without meta
      {
        name: 'links with next and last',
        body: { data: statRows(10), links: { first: LAST(1), last: LAST(5), prev: LAST(1), next: LAST(3) } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 20, page: 2, perPage: 10, lastPage: 5, hasNextPage: true },
      },
      {
        name: 'links on the last page (next null)',
        body: { data: statRows(4), links: { first: LAST(1), last: LAST(3), prev: LAST(2), next: null } },
        requested: { page: 3, perPage: 10 },
        rows: 4,
        expected: { totalCount: 24, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'links with an empty next',
        body: { data: statRows(10), links: { last: LAST(1), next: '' } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'links with next but no last',
        body: { data: statRows(10), links: { first: LAST(1), prev: null, next: LAST(3), last: null } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 20, page: 2, perPage: 10, lastPage: 3, hasNextPage: true },
      },
      {
        name: 'links with neither next nor last (simple paginator on its last page)',
        body: { data: statRows(10), links: { first: LAST(1), prev: LAST(1) } },
        requested: { page: 2, perPage: 10 },
        rows: 10,
        expected: { totalCount: 20, page: 2, perPage: 10, lastPage: 2, hasNextPage: false },
      },
      {
        name: 'empty links',
        body: { data: statRows(10), links: {} },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'a relative last link',
        body: { data: statRows(10), links: { next: '/api/v1/websites?page=2', last: '/api/v1/websites?per_page=10&page=4' } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 4, hasNextPage: true },
      },
      {
        name: 'a query-only last link',
        body: { data: statRows(10), links: { next: '?page=2', last: '?page=7' } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 7, hasNextPage: true },
      },
      {
        name: 'a last link with page=0',
        body: { data: [], links: { next: null, last: LAST(0) } },
        requested: { page: 1, perPage: 10 },
        rows: 0,
        expected: { totalCount: 0, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'a last link without a page parameter',
        body: { data: statRows(10), links: { next: LAST(2), last: 'https://analytics.example/api/v1/stats/1' } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 2, hasNextPage: true },
      },
      {
        name: 'a last link with a non-numeric page',
        body: { data: statRows(10), links: { next: LAST(2), last: LAST('last') } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 2, hasNextPage: true },
      },
      {
        name: 'a last link with a negative page',
        body: { data: statRows(3), links: { next: null, last: LAST(-1) } },
        requested: { page: 3, perPage: 10 },
        rows: 3,
        expected: { totalCount: 23, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'a last link with a fractional page',
        body: { data: statRows(3), links: { next: null, last: LAST('2.0') } },
        requested: { page: 3, perPage: 10 },
        rows: 3,
        expected: { totalCount: 23, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'a last link with a padded page',
        body: { data: statRows(3), links: { next: null, last: LAST('%205') } },
        requested: { page: 3, perPage: 10 },
        rows: 3,
        expected: { totalCount: 23, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'a last link with a page beyond safe integers',
        body: { data: statRows(3), links: { next: null, last: LAST('99999999999999999999') } },
        requested: { page: 1, perPage: 10 },
        rows: 3,
        expected: { totalCount: 3, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'an unparseable last link',
        body: { data: statRows(10), links: { next: LAST(2), last: 'http://[' } },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 2, hasNextPage: true },
      },
      {
        name: 'links and meta both null',
        body: { data: statRows(10), links: null, meta: null, status: 200 },
        requested: { page: 1, perPage: 10 },
        rows: 10,
        expected: { totalCount: 10, page: 1, perPage: 10, lastPage: 2, hasNextPage: true },
      },
      // neither meta nor links
      {
        name: 'neither: a full page may have a next one',
        body: { data: statRows(10), status: 200 },
        requested: { page: 3, perPage: 10 },
        rows: 10,
        expected: { totalCount: 30, page: 3, perPage: 10, lastPage: 4, hasNextPage: true },
      },
      {
        name: 'neither: a short page is the last',
        body: { data: statRows(7) },
        requested: { page: 3, perPage: 10 },
        rows: 7,
        expected: { totalCount: 27, page: 3, perPage: 10, lastPage: 3, hasNextPage: false },
      },
      {
        name: 'neither: an empty first page',
        body: { data: [] },
        requested: { page: 1, perPage: 10 },
        rows: 0,
        expected: { totalCount: 0, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'neither: more rows than asked for',
        body: { data: statRows(12) },
        requested: { page: 1, perPage: 10 },
        rows: 12,
        expected: { totalCount: 12, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'a bare array, full',
        body: statRows(25),
        requested: { page: 2, perPage: 25 },
        rows: 25,
        expected: { totalCount: 50, page: 2, perPage: 25, lastPage: 3, hasNextPage: true },
      },
      {
        name: 'a bare array, short',
        body: statRows(2),
        requested: { page: 1, perPage: 10 },
        rows: 2,
        expected: { totalCount: 2, page: 1, perPage: 10, lastPage: 1, hasNextPage: false },
      },
      {
        name: 'an empty bare array',
        body: [],
        requested: { page: 1, perPage: 50 },
        rows: 0,
        expected: { totalCount: 0, page: 1, perPage: 50, lastPage: 1, hasNextPage: false },
      },
    ];

    it.each(CASES)('$name', ({ body, requested, rows, expected }) => {
      expect(decodeStatPage(body, requested)).toEqual({ nodes: decodedStats(rows), ...expected } satisfies Page<Stat>);
    });

    it('paginates websites the same way', () => {
      const body = { data: [WIRE_WEBSITE], links: { next: '?page=3', last: '?page=3' } };
      expect(decodeWebsitePage(body, { page: 2, perPage: 1 })).toEqual({
        nodes: [DECODED_WEBSITE],
        totalCount: 2,
        page: 2,
        perPage: 1,
        lastPage: 3,
        hasNextPage: true,
      } satisfies Page<Website>);
    });

    it.each<[string, unknown, string]>([
      ['null', null, 'body: expected an object, got null'],
      ['nothing', undefined, 'body: expected an object, got nothing'],
      ['an HTML page', '<!DOCTYPE html>', 'body: expected an object, got "<!DOCTYPE html>"'],
      ['a number', 200, 'body: expected an object, got 200'],
      ['no data', {}, 'data: expected an array, got nothing'],
      ['an error body', { message: 'Server Error' }, 'data: expected an array, got nothing'],
      ['null data', { data: null }, 'data: expected an array, got null'],
      ['object data', { data: { value: 'a', count: 1 } }, 'data: expected an array, got an object'],
      ['string data', { data: 'rows' }, 'data: expected an array, got "rows"'],
      ['meta as an array', { data: [], meta: [] }, 'meta: expected an object, got an array'],
      ['meta as a string', { data: [], meta: 'x' }, 'meta: expected an object, got "x"'],
      ['meta as a number', { data: [], meta: 1 }, 'meta: expected an object, got 1'],
      ['links as a string', { data: [], links: 'x' }, 'links: expected an object, got "x"'],
      ['plain paginator current_page 0', { data: [], current_page: 0 }, 'current_page: expected a positive integer, got 0'],
      ['plain paginator total "many"', { data: [], current_page: 1, total: 'many' }, 'total: expected a non-negative integer, got "many"'],
      [
        'plain paginator next_page_url 2',
        { data: [], current_page: 1, next_page_url: 2 },
        'next_page_url: expected a URL string or null, got 2',
      ],
      ['meta.current_page 0', { data: [], meta: { current_page: 0 } }, 'meta.current_page: expected a positive integer, got 0'],
      ['meta.current_page "0"', { data: [], meta: { current_page: '0' } }, 'meta.current_page: expected a positive integer, got "0"'],
      ['meta.current_page "two"', { data: [], meta: { current_page: 'two' } }, 'meta.current_page: expected a positive integer, got "two"'],
      ['meta.current_page 1.5', { data: [], meta: { current_page: 1.5 } }, 'meta.current_page: expected a positive integer, got 1.5'],
      ['meta.per_page 0', { data: [], meta: { per_page: 0 } }, 'meta.per_page: expected a positive integer, got 0'],
      ['meta.per_page "ten"', { data: [], meta: { per_page: 'ten' } }, 'meta.per_page: expected a positive integer, got "ten"'],
      ['meta.last_page -1', { data: [], meta: { last_page: -1 } }, 'meta.last_page: expected a non-negative integer, got -1'],
      ['meta.last_page true', { data: [], meta: { last_page: true } }, 'meta.last_page: expected a non-negative integer, got true'],
      ['meta.total 1.5', { data: [], meta: { total: 1.5 } }, 'meta.total: expected a non-negative integer, got 1.5'],
      ['meta.total "-3"', { data: [], meta: { total: '-3' } }, 'meta.total: expected a non-negative integer, got "-3"'],
      ['meta.total as an object', { data: [], meta: { total: {} } }, 'meta.total: expected a non-negative integer, got an object'],
      ['links.next as a number', { data: [], links: { next: 5 } }, 'links.next: expected a URL string or null, got 5'],
      ['links.next as an object', { data: [], links: { next: {} } }, 'links.next: expected a URL string or null, got an object'],
      ['links.last as a boolean', { data: [], links: { next: null, last: true } }, 'links.last: expected a URL string or null, got true'],
      ['links.last as a number', { data: [], links: { last: 3 } }, 'links.last: expected a URL string or null, got 3'],
      [
        'links.next as a number next to meta without last_page',
        { data: [], meta: { total: 0 }, links: { next: 2 } },
        'links.next: expected a URL string or null, got 2',
      ],
    ])('rejects %s', (_, body, message) => {
      expect(wireError(() => decodeStatPage(body, { page: 1, perPage: 10 }))).toBe(message);
    });
  });
});

describe('decodeDeletion', () => {
  it.each<[string, unknown, string, Deletion]>([
    ['the contract body', { id: 1, object: 'website', deleted: true, status: 200 }, '1', { id: '1', deleted: true }],
    ['id and status as strings', { id: '12', object: 'website', deleted: true, status: '200' }, '12', { id: '12', deleted: true }],
    ['id as "12.0"', { id: '12.0', deleted: true }, '12', { id: '12', deleted: true }],
    ['deleted 1', { id: 3, deleted: 1 }, '3', { id: '3', deleted: true }],
    ['deleted "1"', { id: 3, deleted: '1' }, '3', { id: '3', deleted: true }],
    ['deleted "true"', { id: 3, deleted: 'true' }, '3', { id: '3', deleted: true }],
    ['deleted false', { id: 3, deleted: false }, '3', { id: '3', deleted: false }],
    ['deleted 0', { id: 3, deleted: 0 }, '3', { id: '3', deleted: false }],
    ['deleted "0"', { id: 3, deleted: '0' }, '3', { id: '3', deleted: false }],
    ['deleted "false"', { id: 3, deleted: 'false' }, '3', { id: '3', deleted: false }],
    ['deleted wins over a contradicting status', { id: 3, deleted: true, status: 500 }, '3', { id: '3', deleted: true }],
    ['deleted false with status 200', { id: 3, deleted: false, status: 200 }, '3', { id: '3', deleted: false }],
    ['an empty object: the 2xx says it went through', {}, '42', { id: '42', deleted: true }],
    ['only the object name', { object: 'website' }, '42', { id: '42', deleted: true }],
    ['null id and deleted', { id: null, deleted: null }, '42', { id: '42', deleted: true }],
    ['missing deleted, status 200', { id: 42, status: 200 }, '42', { id: '42', deleted: true }],
    ['missing deleted, status "204"', { status: '204' }, '42', { id: '42', deleted: true }],
    ['missing deleted, status 299', { status: 299 }, '42', { id: '42', deleted: true }],
    ['missing deleted, status "200.0"', { status: '200.0' }, '42', { id: '42', deleted: true }],
    ['missing deleted, null status', { status: null }, '42', { id: '42', deleted: true }],
    ['a message next to the status', { message: 'Website deleted.', status: 200 }, '42', { id: '42', deleted: true }],
    ['the id of the body wins over the requested one', { id: 7, deleted: true }, '42', { id: '7', deleted: true }],
  ])('%s', (_, body, requestedId, expected) => {
    expect(decodeDeletion(body, requestedId)).toEqual(expected);
  });

  it.each<[unknown, string]>([
    [null, 'body: expected an object, got null'],
    [undefined, 'body: expected an object, got nothing'],
    ['', 'body: expected an object, got ""'],
    ['deleted', 'body: expected an object, got "deleted"'],
    [true, 'body: expected an object, got true'],
    [[{ id: 1, deleted: true }], 'body: expected an object, got an array'],
    [{ id: 0, deleted: true }, 'id: expected a positive integer, got 0'],
    [{ id: 'abc', deleted: true }, 'id: expected a positive integer, got "abc"'],
    [{ id: -4, deleted: true }, 'id: expected a positive integer, got -4'],
    [{ id: {}, deleted: true }, 'id: expected a positive integer, got an object'],
    [{ id: 1, deleted: 2 }, 'deleted: expected a flag (0/1 or true/false), got 2'],
    [{ id: 1, deleted: 'yes' }, 'deleted: expected a flag (0/1 or true/false), got "yes"'],
    [{ id: 1, deleted: [] }, 'deleted: expected a flag (0/1 or true/false), got an array'],
    [{ id: 1, status: 404 }, 'status: expected a 2xx status when `deleted` is missing, got 404'],
    [{ id: 1, status: '500' }, 'status: expected a 2xx status when `deleted` is missing, got "500"'],
    [{ status: 199 }, 'status: expected a 2xx status when `deleted` is missing, got 199'],
    [{ status: 300 }, 'status: expected a 2xx status when `deleted` is missing, got 300'],
    [{ status: 0 }, 'status: expected a 2xx status when `deleted` is missing, got 0'],
    [{ status: 'ok' }, 'status: expected a non-negative integer, got "ok"'],
    [{ status: -200 }, 'status: expected a non-negative integer, got -200'],
    [{ status: 200.5 }, 'status: expected a non-negative integer, got 200.5'],
    [{ status: true }, 'status: expected a non-negative integer, got true'],
  ])('rejects %j', (body, message) => {
    expect(wireError(() => decodeDeletion(body, '1'))).toBe(message);
  });
});

describe('decodeErrorBody', () => {
  const NOTHING: UpstreamErrorBody = { message: null, fieldErrors: {} };

  it.each<[string, unknown, UpstreamErrorBody]>([
    ['401', { message: 'Unauthenticated.' }, { message: 'Unauthenticated.', fieldErrors: {} }],
    ['404', { message: 'Resource not found.', status: 404 }, { message: 'Resource not found.', fieldErrors: {} }],
    ['429', { message: 'Too Many Attempts.' }, { message: 'Too Many Attempts.', fieldErrors: {} }],
    [
      '422 with the field map in message',
      { message: { domain: ['The domain has already been taken.'] }, status: 422 },
      { message: null, fieldErrors: { domain: ['The domain has already been taken.'] } },
    ],
    [
      '422 stock Laravel: a string message and the field map in errors',
      {
        message: 'The given data was invalid.',
        errors: { domain: ['The domain field is required.'], password: ['The password must be 1 to 128 characters.'] },
      },
      {
        message: 'The given data was invalid.',
        fieldErrors: {
          domain: ['The domain field is required.'],
          password: ['The password must be 1 to 128 characters.'],
        },
      },
    ],
    [
      'several messages for one field',
      { message: { exclude_ips: ['The first IP is invalid.', 'The second IP is invalid.'] } },
      { message: null, fieldErrors: { exclude_ips: ['The first IP is invalid.', 'The second IP is invalid.'] } },
    ],
    [
      'a string instead of an array in message',
      { message: { domain: 'The domain has already been taken.' }, status: 422 },
      { message: null, fieldErrors: { domain: ['The domain has already been taken.'] } },
    ],
    [
      'a string instead of an array in errors',
      { message: 'Invalid.', errors: { to: 'The to must be a date after or equal to from.' } },
      { message: 'Invalid.', fieldErrors: { to: ['The to must be a date after or equal to from.'] } },
    ],
    [
      'both maps, merged without duplicates, message fields first',
      { message: { domain: ['a', 'b'], name: ['n'] }, errors: { privacy: ['p'], domain: ['b', 'c'] } },
      { message: null, fieldErrors: { domain: ['a', 'b', 'c'], name: ['n'], privacy: ['p'] } },
    ],
    ['duplicates within one field', { errors: { domain: ['taken', 'taken'] } }, { message: null, fieldErrors: { domain: ['taken'] } }],
    [
      'non-string and blank messages are dropped',
      { errors: { domain: ['ok', 5, null, true, {}, [], '', '   '] } },
      { message: null, fieldErrors: { domain: ['ok'] } },
    ],
    [
      'fields without a readable message are left out',
      { message: { a: [], b: null, c: 5, d: { nested: ['x'] }, e: '', f: ' ', g: [1, 2] }, errors: { h: false } },
      NOTHING,
    ],
    [
      'messages are kept verbatim',
      { message: '  Spaced out.  ', errors: { domain: ['  padded  '] } },
      { message: '  Spaced out.  ', fieldErrors: { domain: ['  padded  '] } },
    ],
    ['an empty message', { message: '' }, NOTHING],
    ['a blank message', { message: ' \n ' }, NOTHING],
    ['a numeric message', { message: 500 }, NOTHING],
    ['a null message', { message: null, status: 500 }, NOTHING],
    ['an array message', { message: ['Something failed.'] }, NOTHING],
    ['an empty field map', { message: {} }, NOTHING],
    ['errors that are not a map', { message: 'Bad.', errors: ['domain is bad'] }, { message: 'Bad.', fieldErrors: {} }],
    ['errors as a string', { message: 'Bad.', errors: 'domain is bad' }, { message: 'Bad.', fieldErrors: {} }],
    ['errors null', { message: 'Bad.', errors: null }, { message: 'Bad.', fieldErrors: {} }],
    ['an empty object', {}, NOTHING],
    ['only a status', { status: 500 }, NOTHING],
    ['null (unreadable body)', null, NOTHING],
    ['nothing', undefined, NOTHING],
    ['an HTML page', '<!DOCTYPE html><html><body>Server Error</body></html>', NOTHING],
    ['a plain string', 'Unauthenticated.', NOTHING],
    ['a number', 500, NOTHING],
    ['a boolean', false, NOTHING],
    ['an array', [{ message: 'Unauthenticated.' }], NOTHING],
  ])('%s', (_, body, expected) => {
    expect(decodeErrorBody(body)).toEqual(expected);
  });

  it('keeps field names that collide with Object.prototype as plain own properties', () => {
    const body: unknown = JSON.parse(
      '{"message":{"__proto__":["polluted"],"constructor":["c"],"toString":["t"]},"errors":{"hasOwnProperty":"h"}}',
    );
    const { message, fieldErrors } = decodeErrorBody(body);
    expect(message).toBeNull();
    expect(Object.getPrototypeOf(fieldErrors)).toBe(Object.prototype);
    expect(Object.keys(fieldErrors)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(Object.getOwnPropertyDescriptor(fieldErrors, '__proto__')?.value).toEqual(['polluted']);
    expect(Object.getOwnPropertyDescriptor(fieldErrors, 'constructor')?.value).toEqual(['c']);
    expect(Object.getOwnPropertyDescriptor(fieldErrors, 'toString')?.value).toEqual(['t']);
    expect(Object.getOwnPropertyDescriptor(fieldErrors, 'hasOwnProperty')?.value).toEqual(['h']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not share arrays with the body', () => {
    const messages = ['taken'];
    const { fieldErrors } = decodeErrorBody({ errors: { domain: messages } });
    expect(fieldErrors.domain).toEqual(['taken']);
    expect(fieldErrors.domain).not.toBe(messages);
  });
});
