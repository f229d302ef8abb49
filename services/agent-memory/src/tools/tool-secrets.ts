import type { FieldErrors } from '@agent-platform/kit';
import type { SecretBox } from '@agent-platform/kit/security';
import type { ToolSave } from './kinds/tool-kind.js';

/** What a header value reads as in every answer; sent back on PUT, it keeps the stored value. */
export const MASKED = '***';

/** Binds a sealed header value to its tool and name: copied elsewhere, it does not open. */
export function sealedFor(toolId: string, header: string): string {
  return `${toolId}:${header.toLowerCase()}`;
}

/**
 * Header values as stored (decisions §12.2): each value sent is sealed; one sent as MASKED keeps
 * the value stored under its name, and is a problem when there is none.
 */
export function sealHeaders(toolId: string, given: Record<string, string>, stored: Record<string, string>, secrets: SecretBox, errors: FieldErrors): Record<string, string> {
  // Entries, not assignments: a header named __proto__ stays a header.
  const sealed: [string, string][] = [];
  for (const [header, value] of Object.entries(given)) {
    if (value !== MASKED) sealed.push([header, secrets.seal(value, sealedFor(toolId, header))]);
    else if (Object.hasOwn(stored, header)) sealed.push([header, stored[header]!]);
    else errors.add(`config.headers.${header}`, `is "${MASKED}" but no value is stored under this name; send the value`);
  }
  return Object.fromEntries(sealed);
}

/** Header values as every answer shows them. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED]));
}

/** A tool's header values, unsealed for one outbound request. */
export function openHeaders(toolId: string, headers: Record<string, string>, secrets: SecretBox): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, sealed]) => [name, secrets.open(sealed, sealedFor(toolId, name))]));
}

/** The header values a save stores: sealed to the tool, "***" keeping what the tool as stored has under that name. */
export function sealHeadersOf(given: Record<string, string>, save: ToolSave): Record<string, string> {
  const stored = (save.stored?.config as { headers?: Record<string, string> } | undefined)?.headers ?? {};
  return sealHeaders(save.toolId, given, stored, save.services.secrets, save.errors);
}
