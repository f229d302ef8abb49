import { Readable } from 'node:stream';
import type { OutgoingCall, PromiseClient } from '@agent-platform/kit/grpc';
import type { Document, DocumentServiceService, UploadDocumentRequest } from '@agent-platform/proto/agents/v1/documents';
import { expect, vi } from 'vitest';
import type { AgentMemoryHarness, TestTenant } from './harness.js';

/** An upload as the gateway sends it: the file in pieces, then the header from the form's fields. */
export function uploadOf(
  file: Buffer | string,
  header: { agentId: string; filename: string; contentType: string; title?: string; metadataJson?: string; userId?: string },
): AsyncIterable<UploadDocumentRequest> {
  const bytes = typeof file === 'string' ? Buffer.from(file) : file;
  const messages: UploadDocumentRequest[] = [];
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) messages.push({ data: bytes.subarray(offset, offset + 64 * 1024) });
  return Readable.from([...messages, { header }]);
}

/** The document once its background work is done: its status, polled as a client would. */
export async function settled(documents: PromiseClient<typeof DocumentServiceService>, call: OutgoingCall, documentId: string): Promise<Document> {
  return vi.waitFor(
    async () => {
      const { document } = await documents.getDocument({ documentId }, call);
      expect(document?.status, documentId).not.toBe('processing');
      return document!;
    },
    { timeout: 20_000, interval: 50 },
  );
}

export async function allChunks(service: Pick<AgentMemoryHarness, 'documents'>, call: OutgoingCall, documentId: string) {
  return (await service.documents.listDocumentChunks({ documentId, page: { page: 1, perPage: 100 } }, call)).chunks;
}

export function tenantCall(tenant: TestTenant): OutgoingCall {
  return { principal: tenant.principal };
}
