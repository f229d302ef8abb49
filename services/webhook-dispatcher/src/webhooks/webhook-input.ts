import type { FieldErrors } from '@agent-platform/kit';
import { ALL_EVENTS, isEventType } from '@agent-platform/kit/events';
import type { OutboundPolicy } from '@agent-platform/kit/security';
import { isAcceptableSecret } from '../security/signing.js';

/** 16 KiB of JSON text: room for references and labels, not for documents. */
export const MAX_METADATA_BYTES = 16 * 1_024;
export const MAX_DESCRIPTION_LENGTH = 500;

/**
 * Checks the URL against the SSRF policy (resolving its host). Returns the trimmed URL, or
 * undefined after recording the problem under `url`.
 */
export async function checkUrl(raw: string, policy: OutboundPolicy, errors: FieldErrors): Promise<string | undefined> {
  const url = raw.trim();
  if (url === '') {
    errors.add('url', 'is required');
    return undefined;
  }
  const problem = await policy.checkUrl(url);
  if (problem !== undefined) {
    errors.add('url', problem);
    return undefined;
  }
  return url;
}

/**
 * decisions §8: catalogue types, or `*` alone. `agent.message` and `workflow.completed` (from the
 * spec's listing example) are not types. Duplicates collapse; the order given is kept.
 */
export function checkEvents(events: readonly string[], errors: FieldErrors): string[] {
  if (events.length === 0) {
    errors.add('events', 'must list at least one event type, or "*"');
    return [];
  }
  let valid = true;
  for (const [index, event] of events.entries()) {
    if (event === ALL_EVENTS) {
      if (events.length > 1 && events.some((other) => other !== ALL_EVENTS)) {
        errors.add(`events[${index}]`, '"*" already subscribes to every type; list it alone');
        valid = false;
      }
    } else if (!isEventType(event)) {
      errors.add(`events[${index}]`, `"${event}" is not an event type of the catalogue`);
      valid = false;
    }
  }
  return valid ? [...new Set(events)] : [];
}

export function checkSecret(secret: string, errors: FieldErrors): void {
  if (!isAcceptableSecret(secret)) errors.add('secret', 'must be 16 to 128 printable ASCII characters');
}

/** A JSON object as text; returned re-serialised compactly (key order kept). */
export function checkMetadata(text: string, errors: FieldErrors): string {
  if (Buffer.byteLength(text, 'utf8') > MAX_METADATA_BYTES) {
    errors.add('metadata', `must be at most ${MAX_METADATA_BYTES} bytes of JSON`);
    return '{}';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    errors.add('metadata', 'must be valid JSON');
    return '{}';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add('metadata', 'must be a JSON object');
    return '{}';
  }
  return JSON.stringify(value);
}

export function checkDescription(description: string, errors: FieldErrors): string | null {
  const trimmed = description.trim();
  if ([...trimmed].length > MAX_DESCRIPTION_LENGTH) errors.add('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return trimmed === '' ? null : trimmed;
}
