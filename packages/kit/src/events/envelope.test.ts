import { describe, expect, it } from 'vitest';
import { isId } from '../ids.js';
import { eventSubject, newEvent, parseEnvelope, subjectMatches } from './envelope.js';

describe('newEvent', () => {
  it('builds the decisions §8 envelope', () => {
    const at = new Date('2026-11-01T12:34:56.789Z');
    const event = newEvent('billing.credits.low', 'tnt_01ARZ3NDEKTSV4RRFFQ69G5FAV', { balance: 99, threshold: 100 }, at);
    expect(isId('event', event.id)).toBe(true);
    expect(event).toEqual({
      id: event.id,
      type: 'billing.credits.low',
      created_at: '2026-11-01T12:34:56.789Z',
      data: { balance: 99, threshold: 100 },
      tenant_id: 'tnt_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      api_version: '2026-11-01',
    });
  });

  it('gives every event its own id and a millisecond UTC timestamp', () => {
    const first = newEvent('a.b', 'tnt_1', {});
    const second = newEvent('a.b', 'tnt_1', {});
    expect(first.id).not.toBe(second.id);
    expect(first.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('eventSubject', () => {
  it('is events.<tenant_id>.<type>', () => {
    expect(eventSubject({ tenant_id: 'tnt_1', type: 'billing.purchase.completed' })).toBe('events.tnt_1.billing.purchase.completed');
  });
});

describe('subjectMatches', () => {
  it.each([
    ['events.>', 'events.tnt_1.billing.credits.low', true],
    ['events.>', 'events', false],
    ['events.*.billing.credits.low', 'events.tnt_1.billing.credits.low', true],
    ['events.*.billing.credits.low', 'events.tnt_1.billing.credits.low.more', false],
    ['events.*.billing.>', 'events.tnt_1.billing.purchase.completed', true],
    ['events.tnt_1.>', 'events.tnt_2.agent.created', false],
    ['events.*', 'events.tnt_1', true],
    ['events.*', 'events.tnt_1.agent', false],
    ['events.tnt_1.agent.created', 'events.tnt_1.agent.created', true],
    ['events.tnt_1.agent', 'events.tnt_1.agent.created', false],
    ['*.*.*', 'a.b', false],
  ])('%s against %s is %s', (filter, subject, expected) => {
    expect(subjectMatches(filter, subject)).toBe(expected);
  });
});

describe('parseEnvelope', () => {
  it('accepts an envelope and refuses anything else', () => {
    const event = newEvent('a.b', 'tnt_1', { x: 1 });
    expect(parseEnvelope(JSON.stringify(event))).toEqual(event);
    for (const bad of ['not json', '[]', 'null', '{}', JSON.stringify({ ...event, data: 'x' }), JSON.stringify({ ...event, tenant_id: '' })]) {
      expect(parseEnvelope(bad)).toBeUndefined();
    }
  });
});
