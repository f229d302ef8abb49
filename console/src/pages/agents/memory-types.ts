/** The memory an agent can keep (decisions §7); a new agent's default is the first two. */
export const MEMORY_TYPES = ['semantic', 'episodic', 'procedural'] as const;
export const DEFAULT_MEMORY_TYPES: readonly string[] = ['semantic', 'episodic'];
