import type { TestDatabase } from '@agent-platform/kit/testing';
import { z } from 'zod';
import { Tool } from '../../src/tools/tools.entity.js';
import { text, type TestTool } from './mcp-server.js';

/** An issue tracker's tools, the test MCP server's usual set. */
export const TRACKER_TOOLS: Record<string, TestTool> = {
  search_issues: { description: 'Finds issues by words.', input: { query: z.string() }, run: ({ query }) => text(`found: ${String(query)}`) },
  create_issue: { description: 'Opens an issue.', input: { title: z.string() }, run: ({ title }) => text(`opened: ${String(title)}`) },
};

interface ToolRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  type: Tool['type'];
  config: Tool['config'];
  input_schema: Tool['inputSchema'];
  discovered: Tool['discovered'];
  requires_approval: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The tool as stored, as the chat turn will hold it: header values sealed. */
export async function mcpToolOf(database: TestDatabase, id: string): Promise<Tool> {
  const [row] = await database.query<ToolRow>(`select * from "tools" where "id" = $1`, [id]);
  if (!row) throw new Error(`no tool ${id}`);
  return Object.assign(new Tool(), {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    type: row.type,
    config: row.config,
    inputSchema: row.input_schema,
    discovered: row.discovered,
    requiresApproval: row.requires_approval,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}
