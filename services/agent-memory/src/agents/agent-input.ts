import type { FieldErrors } from '@agent-platform/kit';
import { MEMORY_TYPES, type AgentSettings, type MemoryType } from './agents.entity.js';

// decisions §6; the bounds not named there are generous but finite, so nothing unbounded is stored.
const NAME_MAX = 200;
const DESCRIPTION_MAX = 2_000;
const TYPE_PATTERN = /^[a-z0-9_-]{1,64}$/;
const MODEL_MAX = 200;
const SYSTEM_PROMPT_MAX = 32_000;
const MAX_TOKENS_LIMIT = 1_000_000;
export const DEFAULT_MEMORY_TYPES: readonly MemoryType[] = ['semantic', 'episodic'];

export function checkName(name: string, errors: FieldErrors): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > NAME_MAX) errors.add('name', `must be 1 to ${NAME_MAX} characters, not blank`);
  return trimmed;
}

export function checkType(type: string, errors: FieldErrors): string {
  if (!TYPE_PATTERN.test(type)) errors.add('type', 'must be 1 to 64 characters of a-z, 0-9, _ and -');
  return type;
}

export function checkDescription(description: string, errors: FieldErrors): string {
  if (description.length > DESCRIPTION_MAX) errors.add('description', `must be at most ${DESCRIPTION_MAX} characters`);
  return description;
}

/** Empty means the default; duplicates are folded; order follows the catalogue. */
export function checkMemoryTypes(types: readonly string[], errors: FieldErrors): MemoryType[] {
  if (types.length === 0) return [...DEFAULT_MEMORY_TYPES];
  types.forEach((type, index) => {
    if (!(MEMORY_TYPES as readonly string[]).includes(type)) errors.add(`memory_types[${index}]`, `must be one of ${MEMORY_TYPES.join(', ')}`);
  });
  return MEMORY_TYPES.filter((type) => types.includes(type));
}

/** A turn that needs more rounds than this is a loop, not a plan. */
const MAX_TOOL_ROUNDS_LIMIT = 32;

type Check = (value: unknown) => string | undefined;

const number = (min: number, max: number): Check => (value) =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? undefined : `must be a number from ${min} to ${max}`;
const integer = (min: number, max: number): Check => (value) =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? undefined : `must be an integer from ${min} to ${max}`;
const text = (max: number): Check => (value) => (typeof value === 'string' && value.length <= max ? undefined : `must be a string of at most ${max} characters`);

/** The config keys of decisions §6 and what each may hold; any other key is refused by name. */
const CONFIG_KEYS: Record<keyof AgentSettings, Check> = {
  model: (value) => text(MODEL_MAX)(value) ?? ((value as string).trim() === '' ? 'must not be blank' : undefined),
  temperature: number(0, 2),
  max_tokens: integer(1, MAX_TOKENS_LIMIT),
  system_prompt: text(SYSTEM_PROMPT_MAX),
  top_p: number(0, 1),
  max_tool_rounds: integer(1, MAX_TOOL_ROUNDS_LIMIT),
  memory_extraction: (value) => (typeof value === 'boolean' || value === 'shared' ? undefined : 'must be true, false or "shared"'),
};

/** Extraction writes semantic items: an agent without semantic memory cannot ask for it. */
export function checkExtraction(memoryTypes: readonly MemoryType[], config: AgentSettings, errors: FieldErrors): void {
  const asked = config.memory_extraction;
  if ((asked === true || asked === 'shared') && !memoryTypes.includes('semantic')) {
    errors.add('config.memory_extraction', 'needs semantic in memory_types, where extracted facts are stored');
  }
}

/** `config` as JSON text (what the gateway forwards); absent means `{}`. */
export function checkConfig(configJson: string | undefined, errors: FieldErrors): AgentSettings {
  if (configJson === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(configJson);
  } catch {
    errors.add('config', 'must be a JSON object');
    return {};
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add('config', 'must be an object');
    return {};
  }
  const settings: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null) continue; // null resets the key to the platform's default
    if (!Object.hasOwn(CONFIG_KEYS, key)) {
      errors.add(`config.${key}`, `is not a config key; allowed: ${Object.keys(CONFIG_KEYS).join(', ')}`);
      continue;
    }
    const problem = CONFIG_KEYS[key as keyof AgentSettings](item);
    if (problem) errors.add(`config.${key}`, problem);
    else settings[key] = item;
  }
  return settings;
}
