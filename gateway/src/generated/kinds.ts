// Written by `pnpm kinds` from the kinds' own modules; edit those, then run it again.

/** Workflow node types (services/workflow-runner/src/nodes), in the order people read them. */
export const WORKFLOW_NODE_TYPES = ["webhook","schedule","agent","condition","integration","approval","wait"] as const;

export const WORKFLOW_NODE_KINDS = [
  {
    "type": "webhook",
    "summary": "trigger: an inbound request to `/hooks/<workflow>/<path>`",
    "config": "{path?: \"/…\"}",
    "trigger": true
  },
  {
    "type": "schedule",
    "summary": "trigger: a cron tick",
    "config": "{cron: 5 fields or 6 with seconds first, timezone?: IANA name, default UTC}",
    "trigger": true
  },
  {
    "type": "agent",
    "summary": "a chat turn with an agent of the tenant, as the end user its `user_id` template names",
    "config": "{agent_id, message?: template, user_id?: template naming the end user whose message it is (decisions §14), timeout_ms?}",
    "trigger": false
  },
  {
    "type": "condition",
    "summary": "CEL rules choosing the branch that runs",
    "config": "{rules: [{if: CEL, goto: node id} …, {else: node id}], timeout_ms?}",
    "trigger": false
  },
  {
    "type": "integration",
    "summary": "`http`, `slack` or `email` (through the platform's SMTP server)",
    "config": "{service: http {url, method?, headers?, body?} | slack {webhook_url, text} | email {to, subject, text}, timeout_ms?}",
    "trigger": false
  },
  {
    "type": "approval",
    "summary": "parks the run until a person approves or rejects it, or its time-out passes",
    "config": "{message?: template, timeout_seconds?: 1..2592000, default 86400}: waits for POST …/nodes/{node_id}/approve or /reject",
    "trigger": false
  },
  {
    "type": "wait",
    "summary": "parks the run for `seconds`, or `until` a time",
    "config": "{seconds: 1..2592000} or {until: ISO 8601 time with offset}",
    "trigger": false
  }
] as const;

/** Tool types (services/agent-memory/src/tools/kinds). schemas: own (input_schema) or discovered (from its server). */
export const TOOL_TYPES = ["http","workflow","mcp","agent"] as const;

export const TOOL_KINDS = [
  {
    "type": "http",
    "label": "HTTP endpoint",
    "summary": "one request to the tool's URL with the model's arguments (the JSON body, or a GET's query string); the answer is the result",
    "config": "{url, method?: GET | POST (default) | PUT | PATCH | DELETE, headers?: {name: value} (answered masked)}",
    "schemas": "own"
  },
  {
    "type": "workflow",
    "label": "Workflow",
    "summary": "runs a workflow of the tenant with the model's arguments as its input (trigger `tool`); its output is the result",
    "config": "{workflow_id: a workflow of the tenant}",
    "schemas": "own"
  },
  {
    "type": "mcp",
    "label": "MCP server",
    "summary": "the tools an MCP server (Streamable HTTP) lists, each offered as `<tool>__<name>` with the server's own schema",
    "config": "{url: the server's Streamable HTTP endpoint, headers?: {name: value} (answered masked), allowed_tools?: [names of the server's tools], default every one}",
    "schemas": "discovered"
  },
  {
    "type": "agent",
    "label": "Agent",
    "summary": "sends the model's `message` to another agent of the tenant as a turn of its own (a child run); its answer is the result",
    "config": "{agent_id: an agent of the tenant, not the caller}; the arguments' `message` (else the arguments as JSON) is the turn's message",
    "schemas": "own"
  }
] as const;
