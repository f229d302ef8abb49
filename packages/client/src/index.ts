export { createClient, ApiResponseError, isApiError, type AgentPlatformClient, type CreateClientOptions } from './client.js';
export { streamChat, streamToolCallDecision, type ChatStreamEvent, type StreamChatOptions } from './chat-stream.js';
export { followRun, type FollowRunOptions, type RunEvent } from './run-events.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.js';
export { WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventData, type WebhookEventOf, type WebhookEventType } from './webhook-events.js';
export type * from './types.js';
export type { components, operations, paths } from './schema.js';
/** The API's catalogues, as its OpenAPI document lists them. */
export {
  executionStatusValues as EXECUTION_STATUSES,
  memoryTypeValues as MEMORY_TYPES,
  runStatusValues as RUN_STATUSES,
  runTriggerValues as RUN_TRIGGERS,
  workflowNodeTypeValues as WORKFLOW_NODE_TYPES,
} from './schema.js';
