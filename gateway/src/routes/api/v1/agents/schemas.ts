import { MemoryExtraction, type Agent, type AgentConfig, type AgentVersion } from '@agent-platform/proto/agents/v1/agents';
import { z } from 'zod';
import { iso, pageOf, pathId, Timestamp, VersionNumber } from '../../../../http/schemas.js';

// The gateway checks shapes and types. What a name, a type or a config value may be (lengths,
// the [a-z0-9_-] pattern, the memory type catalogue, ranges, the allowed config keys) is the
// agent-memory service's to decide; its validation_error comes back naming each offending field.

const Name = z.string().describe('1..200 characters, not blank.');

const Type = z.string().describe('What kind of agent: 1..64 characters of a-z, 0-9, _ and - (e.g. support, assistant).');

const Description = z.string().describe('A note for people, up to 2,000 characters.');

const MemoryTypes = z
  .array(z.string())
  .min(1)
  .describe('The memory the agent keeps: a non-empty subset of semantic, episodic, procedural. Default ["semantic", "episodic"].');

const MemoryExtractionSetting = z.union([z.boolean(), z.literal('shared')]);

/** What a config's memory_extraction comes to (decisions §14.2), its default resolved. */
const MEMORY_EXTRACTION_MODES = {
  [MemoryExtraction.MEMORY_EXTRACTION_OFF]: 'off',
  [MemoryExtraction.MEMORY_EXTRACTION_PER_USER]: 'per_user',
  [MemoryExtraction.MEMORY_EXTRACTION_SHARED]: 'shared',
} as const;

const MEMORY_EXTRACTION_SETTINGS = { off: false, per_user: true, shared: 'shared' } as const;

/**
 * The model settings. Unknown keys are kept, not stripped, so the service can refuse them by
 * name (422 naming `config.<key>`); a key set to null takes the platform's default.
 */
const ConfigInput = z
  .looseObject({
    model: z.string().nullable().optional().describe("The model name; overrides the platform's LLM_MODEL."),
    temperature: z.number().nullable().optional().describe('0..2.'),
    max_tokens: z.int().nullable().optional().describe('Longest reply, in tokens: 1..1,000,000.'),
    system_prompt: z.string().nullable().optional().describe('Put first in every conversation; up to 32,000 characters.'),
    top_p: z.number().nullable().optional().describe('0..1.'),
    max_tool_rounds: z.int().nullable().optional().describe('Model rounds that may call tools in one turn: 1..32, default 8.'),
    memory_extraction: MemoryExtractionSetting.nullable()
      .optional()
      .describe(
        'Extract the facts of turns into semantic memory (decisions §14.2): true (the default when memory_types has semantic, which true and "shared" need) from turns that name a user_id, into that end user\'s items; "shared" from turns without one too, into the shared items every end user\'s turns see; false never.',
      ),
  })
  .describe('Model settings; only the keys listed are allowed (any other key is 422). An absent key takes the platform default.')
  // Documented as closed, which the API is: the service refuses other keys (the gateway lets them through to it).
  .meta({ additionalProperties: false });

const Tools = z
  .array(z.string())
  .max(128)
  .describe('Tools the agent may call: tool ids of the tenant (tool_…), in order; an unknown or foreign id is 422 naming tools[<index>]. Default none.');

export const AgentParams = z.object({ agent_id: pathId('agent', 'agt') });
export const AgentVersionParams = AgentParams.extend({ version: VersionNumber });

const AGENT_EXAMPLE = {
  name: 'Support bot',
  type: 'support',
  description: 'Answers questions about orders',
  memory_types: ['semantic', 'episodic'],
  config: { model: 'gpt-4o-mini', temperature: 0.2 },
};

export const CreateAgentBody = z
  .object({
    name: Name,
    type: Type,
    description: Description.optional(),
    memory_types: MemoryTypes.optional(),
    config: ConfigInput.optional(),
    tools: Tools.optional(),
  })
  .meta({ examples: [AGENT_EXAMPLE] });

/** PATCH: only the fields present change; `config` and `memory_types` are replaced whole. */
export const UpdateAgentBody = z.object({
  name: Name.optional(),
  type: Type.optional(),
  description: Description.optional(),
  memory_types: MemoryTypes.optional().describe(`${MemoryTypes.description ?? ''} Replaces the whole list.`),
  config: ConfigInput.optional().describe(`${ConfigInput.description ?? ''} Replaces the whole config object.`),
  tools: Tools.optional().describe(`${Tools.description ?? ''} Replaces the whole list.`),
}).meta({ examples: [{ description: 'Answers questions about orders and returns', config: { temperature: 0.4 } }] });

/** PUT: the whole agent; what is left out is reset (description none, default memory types, empty config, no tools). */
export const ReplaceAgentBody = CreateAgentBody.meta({ examples: [{ ...AGENT_EXAMPLE, name: 'Support bot v2', memory_types: ['semantic'] }] });

export const AgentConfigSchema = z
  .object({
    model: z.string().optional(),
    temperature: z.number().optional(),
    max_tokens: z.int().optional(),
    system_prompt: z.string().optional(),
    top_p: z.number().optional(),
    max_tool_rounds: z.int().optional(),
    memory_extraction: MemoryExtractionSetting.optional(),
  })
  .meta({ id: 'AgentConfig', description: 'Model settings of an agent; only the keys that are set appear.' });

export const AgentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    description: z.string().nullable(),
    memory_types: z.array(z.string()),
    config: AgentConfigSchema,
    memory_extraction: z
      .enum(['off', 'per_user', 'shared'])
      .describe(
        "What config.memory_extraction comes to, its default resolved (decisions §14.2): per_user extracts the facts of turns that name a user_id into that end user's items, shared those of turns without one too, off nothing.",
      ),
    tools: z.array(z.string()).describe('Tool ids the agent may call (decisions §12).'),
    status: z.string().describe('active'),
    version: z
      .int()
      .describe(
        'The version of the current settings (decisions §16): 1 at creation, the next with every change of config, tools or memory_types (a deleted tool taken off included) and every restore; name, type and description alone keep it.',
      ),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Agent', description: 'An AI agent with persistent memory.' });

export const AgentVersionSummary = z
  .object({
    version: z.int(),
    created_at: Timestamp,
    created_by: z
      .string()
      .nullable()
      .describe('The user whose create, update, restore or deletion of a tool made this version; null for the version 1 of an agent made before versions were kept.'),
  })
  .meta({ id: 'AgentVersionSummary' });

export const AgentVersionSchema = AgentVersionSummary.extend({
  memory_types: z.array(z.string()),
  config: AgentConfigSchema,
  tools: z.array(z.string()),
}).meta({
  id: 'AgentVersion',
  description: "One version of an agent's settings: memory_types, config and tools. Name, type and description are not versioned. Versions never change once made.",
});

export const AgentVersionPage = pageOf(AgentVersionSummary);

export const AgentPage = z.object({
  agents: z.array(AgentSchema),
  total: z.int(),
  page: z.int(),
  per_page: z.int(),
});

function configBody(config: AgentConfig | undefined): z.output<typeof AgentConfigSchema> {
  const { model, temperature, maxTokens, systemPrompt, topP, maxToolRounds, extraction } = config ?? {};
  return {
    ...(model === undefined ? {} : { model }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    ...(systemPrompt === undefined ? {} : { system_prompt: systemPrompt }),
    ...(topP === undefined ? {} : { top_p: topP }),
    ...(maxToolRounds === undefined ? {} : { max_tool_rounds: maxToolRounds }),
    ...(extraction === undefined ? {} : { memory_extraction: MEMORY_EXTRACTION_SETTINGS[extractionMode(extraction)] }),
  };
}

function extractionMode(extraction: MemoryExtraction): 'off' | 'per_user' | 'shared' {
  if (extraction === MemoryExtraction.MEMORY_EXTRACTION_UNSPECIFIED || extraction === MemoryExtraction.UNRECOGNIZED) {
    throw new Error(`agent-memory answered an unknown memory extraction (${extraction}).`);
  }
  return MEMORY_EXTRACTION_MODES[extraction];
}

/** The REST agent of a gRPC answer; its absence is an upstream defect (500). */
export function agentBody(agent: Agent | undefined): z.output<typeof AgentSchema> {
  if (!agent) throw new Error('agent-memory answered without the agent.');
  return {
    id: agent.id,
    name: agent.name,
    type: agent.type,
    description: agent.description ?? null,
    memory_types: agent.memoryTypes,
    config: configBody(agent.config),
    memory_extraction: extractionMode(agent.memoryExtraction),
    tools: agent.tools,
    status: agent.status,
    version: agent.version,
    created_at: iso(agent.createdAt),
    updated_at: iso(agent.updatedAt),
  };
}

/** JSON text for gRPC's config_json, unknown keys included; absent stays absent. */
export function configJson(config: Record<string, unknown> | undefined): string | undefined {
  return config === undefined ? undefined : JSON.stringify(config);
}

export function agentVersionSummaryBody(version: AgentVersion): z.output<typeof AgentVersionSummary> {
  return { version: version.version, created_at: iso(version.createdAt), created_by: version.createdBy ?? null };
}

/** A version with its settings; their absence is an upstream defect (500). */
export function agentVersionBody(version: AgentVersion | undefined): z.output<typeof AgentVersionSchema> {
  if (!version?.settings) throw new Error('agent-memory answered without the version and its settings.');
  const { memoryTypes, config, tools } = version.settings;
  return { ...agentVersionSummaryBody(version), memory_types: memoryTypes, config: configBody(config), tools };
}
