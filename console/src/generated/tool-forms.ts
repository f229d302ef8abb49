// Written by `pnpm kinds` from the kinds' own modules; edit those, then run it again.

/** Each tool type's form (services/agent-memory/src/tools/kinds): its name, its config's controls, whose schema the arguments follow. */
export const TOOL_FORMS = {
  "http": {
    "label": "HTTP endpoint",
    "fields": [
      {
        "key": "url",
        "label": "URL",
        "input": "url",
        "hint": "Called with the model's arguments as the JSON body (as the query string for GET)."
      },
      {
        "key": "method",
        "label": "Method",
        "input": "choice",
        "choices": [
          "GET",
          "POST",
          "PUT",
          "PATCH",
          "DELETE"
        ],
        "default": "POST"
      },
      {
        "key": "headers",
        "label": "Headers",
        "input": "headers"
      }
    ],
    "schemas": "own"
  },
  "workflow": {
    "label": "Workflow",
    "fields": [
      {
        "key": "workflow_id",
        "label": "Workflow",
        "input": "workflow"
      }
    ],
    "schemas": "own"
  },
  "mcp": {
    "label": "MCP server",
    "fields": [
      {
        "key": "url",
        "label": "Server URL",
        "input": "url",
        "hint": "The MCP server's Streamable HTTP endpoint; its tools are listed when you save."
      },
      {
        "key": "allowed_tools",
        "label": "Allowed tools",
        "input": "lines",
        "hint": "The server's tools the model is offered, one name a line; empty: every tool."
      },
      {
        "key": "headers",
        "label": "Headers",
        "input": "headers"
      }
    ],
    "schemas": "discovered"
  },
  "agent": {
    "label": "Agent",
    "fields": [
      {
        "key": "agent_id",
        "label": "Agent",
        "input": "agent"
      }
    ],
    "schemas": "own"
  }
} as const;
