const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };
const FASTIFY_PLACEHOLDER = 'Default Response';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

interface Response {
  description?: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
}

interface WithPaths {
  paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>;
  components?: { schemas?: Record<string, { description?: string }> };
}

/**
 * The document with a description for each success response that has none of its own (the
 * swagger plugin writes "Default Response"): the status, and what the body is when it is a
 * component with a description (`OK: An AI agent with persistent memory.`).
 */
export function withSuccessDescriptions<Document extends object>(document: Document): Document {
  const { paths, components } = document as WithPaths;
  for (const item of Object.values(paths ?? {})) {
    for (const method of METHODS) {
      for (const [status, response] of Object.entries(item[method]?.responses ?? {})) {
        if (!status.startsWith('2') || response.description !== FASTIFY_PLACEHOLDER) continue;
        const ref = Object.values(response.content ?? {})[0]?.schema?.$ref;
        const body = ref ? components?.schemas?.[ref.slice(ref.lastIndexOf('/') + 1)]?.description : undefined;
        const text = STATUS_TEXT[status] ?? status;
        response.description = body ? `${text}: ${body}` : text;
      }
    }
  }
  return document;
}
