import { DomainError, parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { Document, DocumentServiceService, UploadDocumentRequest } from '@agent-platform/proto/agents/v1/documents';
import type { DocumentRecord } from './documents.repository.js';
import type { DocumentsService, UploadPart } from './documents.service.js';

export const DOCUMENT_SERVICE_NAME = 'agentplatform.agents.v1.DocumentService';

/** DocumentService: translation only; DocumentsService decides. */
export function documentHandlers(documents: DocumentsService): Handlers<typeof DocumentServiceService> {
  return {
    addTextDocument: async (request, ctx) => {
      const document = await documents.addText(actorOf(ctx), {
        agentId: request.agentId,
        title: present(request.title),
        content: request.content,
        metadataJson: present(request.metadataJson),
        userId: present(request.userId),
      });
      return documentResponse(document);
    },

    uploadDocument: async (requests, ctx) => documentResponse(await documents.upload(actorOf(ctx), uploadParts(requests))),

    addPageDocument: async (request, ctx) => {
      const document = await documents.addPage(actorOf(ctx), {
        agentId: request.agentId,
        url: request.url,
        refreshSeconds: request.refreshSeconds,
        title: present(request.title),
        metadataJson: present(request.metadataJson),
        userId: present(request.userId),
      });
      return documentResponse(document);
    },

    getDocument: async (request, ctx) => documentResponse(await documents.get(actorOf(ctx), request.documentId)),

    listDocuments: async (request, ctx) => {
      const { documents: page, total } = await documents.list(actorOf(ctx), request.agentId, parsePage(request.page));
      return { documents: page.map(toDocumentMessage), total };
    },

    listDocumentChunks: async (request, ctx) => {
      const { chunks, total } = await documents.chunks(actorOf(ctx), request.documentId, parsePage(request.page));
      return {
        chunks: chunks.map((chunk) => ({ id: chunk.id, position: chunk.position, text: chunk.content, page: chunk.page ?? undefined, heading: chunk.heading })),
        total,
      };
    },

    async *readDocumentFile(request, ctx) {
      const file = await documents.file(actorOf(ctx), request.documentId);
      yield { head: { contentType: file.contentType, filename: file.filename ?? undefined, bytes: file.bytes } };
      for await (const data of file.parts) yield { data };
    },

    refreshDocument: async (request, ctx) => documentResponse(await documents.refresh(actorOf(ctx), request.documentId)),

    deleteDocument: async (request, ctx) => {
      await documents.delete(actorOf(ctx), request.documentId);
      return {};
    },
  };
}

/** The messages of an upload as the service reads them; one that is neither is malformed. */
async function* uploadParts(requests: AsyncIterable<UploadDocumentRequest>): AsyncGenerator<UploadPart> {
  for await (const request of requests) {
    if (request.header) {
      const { header } = request;
      yield {
        header: {
          agentId: header.agentId,
          filename: header.filename,
          contentType: header.contentType,
          title: present(header.title),
          metadataJson: present(header.metadataJson),
          userId: present(header.userId),
        },
      };
    } else if (request.data) yield { data: request.data };
    else throw new DomainError('invalid_request', 'An upload message is its header or a piece of the file.');
  }
}

/** Every answer that is one document (each RPC has its own message type of this shape). */
function documentResponse(document: DocumentRecord): { document: Document } {
  return { document: toDocumentMessage(document) };
}

export function toDocumentMessage(document: DocumentRecord): Document {
  return {
    id: document.id,
    agentId: document.agentId,
    title: document.title ?? undefined,
    chunks: document.chunks,
    createdAt: document.createdAt,
    source: document.source,
    status: document.status,
    error: document.error ?? undefined,
    contentType: document.contentType ?? undefined,
    bytes: document.bytes,
    pages: document.pages ?? undefined,
    url: document.url ?? undefined,
    refreshSeconds: document.refreshSeconds ?? undefined,
    refreshedAt: document.refreshedAt ?? undefined,
    filename: document.filename ?? undefined,
    metadataJson: JSON.stringify(document.metadata),
    userId: document.userId ?? undefined,
  };
}
