/**
 * The thread DocumentReader's pool starts: reads one original per task. A document the platform
 * cannot read is an answer, not an error, since a DomainError loses its code crossing threads.
 */
import { DomainError } from '@agent-platform/kit';
import { readOriginal, type Original } from './reading.js';
import type { ReadOutcome } from './document-reader.js';

export default async function read(original: Original): Promise<ReadOutcome> {
  try {
    return { read: await readOriginal(original) };
  } catch (error) {
    if (error instanceof DomainError && error.code === 'unsupported_document') return { unsupported: error.message };
    throw error;
  }
}
