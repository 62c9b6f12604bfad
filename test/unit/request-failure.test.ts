// The requestFailed event's payload: a request id to join the app's log lines, never a forged or
// oversized one, and never the entry code or an unknown error's message.
import type { Request } from 'express';
import { codeAlreadyUsed } from '../../lib/errors';
import { requestFailure, requestIdOf } from '../../lib/observability/request-failure';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const req = (fields: Partial<Request> & { id?: unknown }): Request =>
  ({ method: 'GET', url: '/', headers: {}, ...fields }) as unknown as Request;

test("the app's req.id first, then X-Request-Id, else a new UUID", () => {
  expect(requestIdOf(req({ id: 'app-7', headers: { 'x-request-id': 'proxy-1' } }))).toBe('app-7');
  expect(requestIdOf(req({ id: 12 }))).toBe('12');
  expect(requestIdOf(req({ headers: { 'x-request-id': 'proxy-1' } }))).toBe('proxy-1');
  expect(requestIdOf(req({}))).toMatch(UUID);
});

test('an id that could forge or flood a log line is replaced by a new one', () => {
  for (const forged of ['a\nlevel=error msg=forged', 'x'.repeat(129), 'has space', '']) {
    expect(requestIdOf(req({ headers: { 'x-request-id': forged } }))).toMatch(UUID);
  }
});

test('the payload redacts the code and keeps only the name of an error that is not the package’s', () => {
  const entry = req({ originalUrl: '/platform/callback?code=secret-code' });
  expect(requestFailure(codeAlreadyUsed(), entry, 'entry')).toMatchObject({
    part: 'entry',
    url: '/platform/callback?code=[redacted]',
    code: 'ERR_PLATFORM_CODE_USED',
    status: 400,
  });
  const bug = requestFailure(new RangeError('token abc123 in a message'), entry, 'request');
  expect(bug).toMatchObject({ code: undefined, status: undefined, message: 'RangeError' });
  expect(JSON.stringify(bug)).not.toMatch(/secret-code|abc123/);
});
