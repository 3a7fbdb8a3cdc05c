// The password rule of privacy 2, as the installs apply it, in both dialects: required on create; on
// update `sometimes`, so a website that has a password keeps it and one without is refused (422).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { DIALECTS } from '../../src/sandbox/dialect.js';
import { validateStore, validateUpdate } from '../../src/sandbox/validation.js';
import { TODAY, call } from './http.js';
import type { ErrorBody } from './http.js';

const PASSWORD_REQUIRED = { message: { password: ['The password field is required when privacy is 2.'] }, status: 422 };

describe.each(DIALECTS)('privacy 2 and the password, %s dialect', (dialect) => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, today: TODAY, dialect });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  interface Website {
    id: number;
    privacy: number | string | null;
    password: boolean;
  }
  const show = async (id: number) => (await call<{ data: Website }>(sandbox, `/api/v1/websites/${id}`)).body.data;
  const update = (id: number, form: Record<string, string>) =>
    call<{ data: Website } | ErrorBody>(sandbox, `/api/v1/websites/${id}`, { method: 'PATCH', form });
  const store = (form: Record<string, string>) =>
    call<{ data: Website } | ErrorBody>(sandbox, '/api/v1/websites', { method: 'POST', form });

  it('an update to privacy 2 without a password: a website that has one keeps it', async () => {
    const created = await store({ domain: 'protected.example.com', privacy: '2', password: 's3cret' });
    expect(created.status).toBe(201);
    const { id } = (created.body as { data: Website }).data;
    expect((await update(id, { privacy: '1' })).status).toBe(200);
    const reply = await update(id, { privacy: '2' });
    expect(reply.status).toBe(200);
    expect(await show(id)).toMatchObject({ privacy: 2, password: true });
  });

  it('an update to privacy 2 without a password, of a website without one: 422 on password, nothing changed', async () => {
    expect(await show(1)).toMatchObject({ privacy: 0, password: false });
    const forms: Record<string, string>[] = [{ privacy: '2' }, { privacy: '2', password: '' }, { privacy: '2', email: '1' }];
    for (const form of forms) {
      const reply = await update(1, form);
      expect(reply.status, JSON.stringify(form)).toBe(422);
      expect(reply.body, JSON.stringify(form)).toEqual(PASSWORD_REQUIRED);
    }
    expect(await show(1)).toMatchObject({ privacy: 0, password: false });
    expect((await update(1, { privacy: '2', password: 'now-one' })).status).toBe(200);
    expect(await show(1)).toMatchObject({ privacy: 2, password: true });
  });

  it('a create with privacy 2 needs the password', async () => {
    const reply = await store({ domain: 'no-password.example.com', privacy: '2' });
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual(PASSWORD_REQUIRED);
  });

  it('the rules themselves', () => {
    expect(validateUpdate({ privacy: '2' }, true, dialect)).toEqual({ ok: true, value: { privacy: 2 } });
    expect(validateUpdate({ privacy: '2' }, false, dialect)).toEqual({ ok: false, errors: PASSWORD_REQUIRED.message });
    expect(validateUpdate({ privacy: '2', password: ' spaced ' }, false, dialect)).toEqual({
      ok: true,
      value: { privacy: 2, password: ' spaced ' },
    });
    expect(validateStore({ domain: 'a.example.com', privacy: '2' }, () => false, dialect)).toEqual({
      ok: false,
      errors: PASSWORD_REQUIRED.message,
    });
  });
});
