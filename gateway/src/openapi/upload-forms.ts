import { z } from 'zod';
import { UploadForm } from '../routes/api/v1/memory/documents/schemas.js';

interface WithOperations {
  paths?: Record<string, Record<string, { operationId?: string; requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown }> } }>>;
}

/**
 * Operations that also take a multipart/form-data body, by operationId, with the form they read.
 * Their routes read the form part by part as it streams (a file is never held whole), so Fastify
 * validates only their JSON body; the document describes the form too.
 */
const UPLOAD_FORMS: Record<string, { form: z.ZodType; example: Record<string, string> }> = {
  addDocument: { form: UploadForm, example: { agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', metadata: '{"team":"support"}', file: '(the bytes of handbook.pdf)' } },
};

/** The document with each upload operation's form beside its JSON body. */
export function withUploadForms<Document extends object>(document: Document): Document {
  for (const item of Object.values((document as WithOperations).paths ?? {})) {
    for (const operation of Object.values(item)) {
      const upload = operation.operationId === undefined ? undefined : UPLOAD_FORMS[operation.operationId];
      if (!upload || !operation.requestBody?.content) continue;
      const { $schema: _dialect, ...schema } = z.toJSONSchema(upload.form, { io: 'input' });
      operation.requestBody.content['multipart/form-data'] = { schema, example: upload.example };
    }
  }
  return document;
}
