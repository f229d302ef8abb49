import type { MemoryType } from '@agent-platform/client';

/** What a new agent keeps unless told otherwise (decisions §6): the form starts with these. */
export const DEFAULT_MEMORY_TYPES: readonly MemoryType[] = ['semantic', 'episodic'];
