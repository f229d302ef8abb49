/** `#/components/schemas/<name>` of every `$ref` in `value`, however deep. */
function referencedSchemas(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) referencedSchemas(item, found);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && typeof item === 'string' && item.startsWith('#/components/schemas/')) found.add(item.slice('#/components/schemas/'.length));
    else referencedSchemas(item, found);
  }
}


/**
 * The document without the component schemas no operation reaches. The zod registry holds an input
 * and an output variant of every schema with an id, and every schema registered anywhere; only
 * those the routes use belong in the document.
 */
export function withoutUnusedSchemas<Document extends object>(document: Document): Document {
  const { components, ...rest } = document as { components?: { schemas?: Record<string, unknown> } };
  const schemas = components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  referencedSchemas(rest, used);
  // Schemas reach others: follow them until nothing new turns up.
  for (let size = -1; size !== used.size; ) {
    size = used.size;
    for (const name of [...used]) referencedSchemas(schemas[name], used);
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...components, schemas: kept } };
}
