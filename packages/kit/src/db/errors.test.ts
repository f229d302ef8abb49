import { ConnectionException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { classifyDbError, isUniqueViolation } from './errors.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyDbError', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset socket', withCode('read ECONNRESET', 'ECONNRESET')],
    ['an administrator shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['a server still starting', withCode('the database system is starting up', '57P03')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['a connection exception class 08', withCode('connection failure', '08006')],
    ['a pool wait time-out', new Error('timeout exceeded when trying to connect')],
    ['a connection ended mid-query', new Error('Connection terminated unexpectedly')],
    ['a MikroORM ConnectionException', new ConnectionException(new Error('no route'))],
    ['a dual-stack refusal', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['a wrapped cause', new Error('query failed', { cause: withCode('read ETIMEDOUT', 'ETIMEDOUT') })],
  ])('maps %s to service_unavailable', (_label, error) => {
    const classified = classifyDbError(error);
    expect(classified).toBeInstanceOf(DomainError);
    expect(classified?.code).toBe('service_unavailable');
    expect(classified?.message).not.toMatch(/5432|ECONN|terminat/);
  });

  it.each([
    ['a NUL in a bound parameter (protocol violation, as MikroORM reports it)', new DriverException(withCode('invalid message format', '08P01'))],
    ['a byte sequence invalid in UTF-8', withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021')],
    ['an untranslatable character in jsonb', withCode('unsupported Unicode escape sequence', '22P05')],
  ])('maps %s to invalid_request, not to an outage', (_label, error) => {
    expect(classifyDbError(error)?.code).toBe('invalid_request');
  });

  it.each([
    ['a syntax error', withCode('syntax error at or near "selec"', '42601')],
    ['a unique violation', new UniqueConstraintViolationException(withCode('duplicate key', '23505'))],
    ['a plain bug', new TypeError('x is undefined')],
    ['a non-error', 'oops'],
    ['nothing', undefined],
  ])('leaves %s alone', (_label, error) => {
    expect(classifyDbError(error)).toBeUndefined();
  });
});

describe('isUniqueViolation', () => {
  const violation = new UniqueConstraintViolationException(
    Object.assign(withCode('duplicate key value violates unique constraint "users_email_key"', '23505'), { constraint: 'users_email_key' }),
  );

  it('recognises a violation, of a named constraint or any', () => {
    expect(isUniqueViolation(violation)).toBe(true);
    expect(isUniqueViolation(violation, 'users_email_key')).toBe(true);
    expect(isUniqueViolation(violation, 'memberships_pkey')).toBe(false);
  });

  it('ignores other errors', () => {
    expect(isUniqueViolation(new DriverException(withCode('deadlock detected', '40P01')))).toBe(false);
    expect(isUniqueViolation(new Error('duplicate'))).toBe(false);
  });
});
