import type { z } from 'zod';

/** The message of a field that was not sent. */
export const REQUIRED = 'is required';

const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'an e-mail address',
  url: 'a URL',
  uuid: 'a UUID',
  datetime: 'a date and time (ISO 8601, with its offset)',
  date: 'a date (YYYY-MM-DD)',
};

/**
 * What a refused field says, in the services' own voice ("must be at least 8 characters"): zod's
 * defaults are written for developers ("Too small: expected string to have >=8 characters"), and a
 * client such as the console shows these to the people who filled in the form. A message a schema
 * gives itself wins over these; what is not here keeps zod's.
 */
export const forPeople: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return REQUIRED;
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_small':
      return bound('at least', issue.origin, Number(issue.minimum), issue.inclusive !== false);
    case 'too_big':
      return bound('at most', issue.origin, Number(issue.maximum), issue.inclusive !== false);
    case 'invalid_format':
      return `must be ${FORMAT_NAMES[issue.format] ?? `in the ${issue.format} format`}`;
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return `has keys it does not take: ${issue.keys.join(', ')}`;
    case 'invalid_union':
      return 'is none of the forms it may take';
    default:
      return undefined;
  }
};

function bound(side: 'at least' | 'at most', origin: string, limit: number, inclusive: boolean): string {
  const count = limit.toLocaleString('en');
  switch (origin) {
    case 'string':
      if (side === 'at least' && limit === 1) return 'must not be empty';
      return `must be ${side} ${count} character${limit === 1 ? '' : 's'}`;
    case 'array':
    case 'set':
      if (side === 'at least' && limit === 1) return 'must not be empty';
      return `must have ${side} ${count} item${limit === 1 ? '' : 's'}`;
    default:
      if (inclusive) return `must be ${side} ${count}`;
      return `must be ${side === 'at least' ? 'more' : 'less'} than ${count}`;
  }
}
