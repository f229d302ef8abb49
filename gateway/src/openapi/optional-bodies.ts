const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

interface JsonSchema {
  anyOf?: JsonSchema[];
  type?: unknown;
}

interface WithBodies {
  paths?: Record<string, Record<string, { requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } }>>;
}

/**
 * The document with each body a route reads as `nullish` (a bare POST is fine: Fastify reads no
 * body as null) marked as optional: clients then need not send one. The schema keeps its `null`
 * branch, which the route still accepts.
 */
export function withOptionalBodies<Document extends object>(document: Document): Document {
  for (const item of Object.values((document as WithBodies).paths ?? {})) {
    for (const method of METHODS) {
      const body = item[method]?.requestBody;
      const branches = body?.content?.['application/json']?.schema?.anyOf;
      if (body && branches?.some((branch) => branch.type === 'null')) body.required = false;
    }
  }
  return document;
}
