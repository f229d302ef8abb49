/** The workflow graph of decisions §7: node types, their validated configs, edges. */

export const NODE_TYPES = ['webhook', 'schedule', 'agent', 'condition', 'integration', 'approval', 'wait'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const TRIGGER_NODE_TYPES = ['webhook', 'schedule'] as const satisfies readonly NodeType[];
export type TriggerNodeType = (typeof TRIGGER_NODE_TYPES)[number];

export const INTEGRATION_SERVICES = ['http', 'slack', 'email'] as const;
export type IntegrationService = (typeof INTEGRATION_SERVICES)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const MAX_NODES = 200;
/** A graph without cycles, self-loops or duplicates has at most n(n-1)/2 edges. */
export const MAX_EDGES = (MAX_NODES * (MAX_NODES - 1)) / 2;
export const MAX_RULES = 50;
export const MAX_EMAIL_RECIPIENTS = 50;
export const MAX_TIMEOUT_MS = 300_000; // the execution time-out, 5 min
export const DEFAULT_TIMEZONE = 'UTC';
/** decisions §13: how long an approval or a wait may hold an execution, 30 days. */
export const MAX_WAIT_SECONDS = 2_592_000;
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 86_400;
export const MAX_ATTEMPTS = 10;
/** Retries wait inside the execution's time-out (default 5 min), so a longer first backoff could never be waited out. */
export const MAX_BACKOFF_SECONDS = 300;

export interface WebhookConfig {
  /** '' when none was given; otherwise begins with `/`. */
  path: string;
}

export interface ScheduleConfig {
  /** 5 fields, or 6 with leading seconds. */
  cron: string;
  /** An IANA name. */
  timezone: string;
}

export interface AgentConfig {
  agent_id: string;
  /** A template over the scope; absent: `input.message`, else the JSON of `input`. */
  message?: string;
  /**
   * A template over the scope naming the end user whose message the node handles (decisions
   * §14): the turn sees their memories and the shared ones, and its facts become theirs.
   */
  user_id?: string;
  timeout_ms?: number;
}

export type ConditionRule = { if: string; goto: string } | { else: string };

export interface ConditionConfig {
  /** `if` rules in order, then at most one `else` rule. */
  rules: ConditionRule[];
  timeout_ms?: number;
}

export interface HttpConfig {
  service: 'http';
  /** A template; without placeholders an absolute http(s) URL. */
  url: string;
  method: HttpMethod;
  /** Values are templates. */
  headers: Record<string, string>;
  /** Any JSON; every string in it is a template. */
  body?: unknown;
  timeout_ms?: number;
}

export interface SlackConfig {
  service: 'slack';
  webhook_url: string;
  text: string;
  timeout_ms?: number;
}

export interface EmailConfig {
  service: 'email';
  to: string[];
  subject: string;
  text: string;
  timeout_ms?: number;
}

export type IntegrationConfig = HttpConfig | SlackConfig | EmailConfig;

export interface ApprovalConfig {
  /** A template, shown to the people asked and in `workflow.execution.waiting`; '' when none was given. */
  message: string;
  timeout_seconds: number;
}

/** Exactly one of the two: a delay from when the node is reached, or an instant. */
export type WaitConfig = { seconds: number } | { until: string };

/** decisions §13: a node's own failure handling, outside its config. */
export interface RetryPolicy {
  max_attempts: number;
  /** Before the second attempt; doubled before each later one. */
  backoff_seconds: number;
}

export const ON_ERROR = ['fail', 'continue'] as const;
export type OnError = (typeof ON_ERROR)[number];

/** Kept on a node only when given, so a saved graph reads back as it was written. */
export interface NodePolicy {
  retry?: RetryPolicy;
  on_error?: OnError;
}

export type WorkflowNode = NodePolicy &
  (
    | { id: string; type: 'webhook'; config: WebhookConfig }
    | { id: string; type: 'schedule'; config: ScheduleConfig }
    | { id: string; type: 'agent'; config: AgentConfig }
    | { id: string; type: 'condition'; config: ConditionConfig }
    | { id: string; type: 'integration'; config: IntegrationConfig }
    | { id: string; type: 'approval'; config: ApprovalConfig }
    | { id: string; type: 'wait'; config: WaitConfig }
  );

export type NodeOfType<T extends NodeType> = Extract<WorkflowNode, { type: T }>;

export interface WorkflowEdge {
  source: string;
  target: string;
}

export type TriggerType = 'webhook' | 'schedule' | 'manual';

export interface WorkflowGraph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}
