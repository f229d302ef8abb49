import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RegisterBody } from '../routes/api/v1/auth/schemas.js';
import { parseForPeople } from './validation.js';

const messagesOf = (schema: z.ZodType, value: unknown) => Object.fromEntries((parseForPeople(schema, value).error?.issues ?? []).map((issue) => [issue.path.join('.'), issue.message]));

describe('refusals worded for people', () => {
  it('say what the register form needs, in the services’ voice', () => {
    expect(messagesOf(RegisterBody, { email: 'ada', password: 'short', company: ' ' })).toEqual({
      email: 'must be an e-mail address',
      password: 'must be at least 8 characters',
      company: 'must not be empty',
    });
    expect(messagesOf(RegisterBody, {})).toEqual({ email: 'is required', password: 'is required' });
    expect(messagesOf(RegisterBody, { email: 'ada@example.com', password: 'x'.repeat(129) })).toEqual({ password: 'must be at most 128 characters' });
  });

  it('name types, bounds, choices and lists', () => {
    const schema = z.object({
      count: z.int().min(1).max(100),
      share: z.number().gt(0),
      kind: z.enum(['a', 'b']),
      exact: z.literal('shared'),
      tags: z.array(z.string()).min(1).max(2),
      flag: z.boolean(),
      either: z.union([z.boolean(), z.literal('shared')]),
    });
    expect(messagesOf(schema, { count: 0, share: 0, kind: 'c', exact: 'x', tags: [], flag: 'yes', either: 3 })).toEqual({
      count: 'must be at least 1',
      share: 'must be more than 0',
      kind: 'must be one of "a", "b"',
      exact: 'must be "shared"',
      tags: 'must not be empty',
      flag: 'must be true or false',
      either: 'is none of the forms it may take',
    });
    expect(messagesOf(schema.pick({ count: true, tags: true }), { count: 1.5, tags: ['a', 'b', 'c'] })).toEqual({ count: 'must be a whole number', tags: 'must have at most 2 items' });
  });

  it('keep a message a schema gives itself', () => {
    expect(messagesOf(z.object({ at: z.string().refine(() => false, { message: 'Must be in the future.' }) }), { at: 'x' })).toEqual({ at: 'Must be in the future.' });
  });
});
