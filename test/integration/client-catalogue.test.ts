import { WEBHOOK_EVENT_TYPES } from '@agent-platform/client';
import { EVENT_TYPES } from '@agent-platform/kit/events';
import { expect, it } from 'vitest';

// The client is published on its own and cannot import the kit, so it keeps its own copy of the
// event catalogue; this holds the two equal.
it("the client's webhook event types are the platform's event catalogue", () => {
  expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...EVENT_TYPES].sort());
});
