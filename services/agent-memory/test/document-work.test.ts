import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Readable } from 'node:stream';
import { createLogger, DomainError } from '@agent-platform/kit';
import { GrpcChannel, type OutgoingCall, type PromiseClient } from '@agent-platform/kit/grpc';
import { OutboundHttp, OutboundPolicy, systemResolver } from '@agent-platform/kit/security';
import { spawnChildService, startReceiver } from '@agent-platform/kit/testing';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { DocumentServiceService, type Document } from '@agent-platform/proto/agents/v1/documents';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { openDatabase } from '../src/database.js';
import { DocumentsRepository } from '../src/documents/documents.repository.js';
import { fetchPage, PageFetchError } from '../src/documents/page-fetch.js';
import type { Embedder } from '../src/models/embedder.js';
import { HashingEmbedder } from '../src/models/hashing-embedder.js';
import { eventsOf, newTenant, ownDatabaseTest, startAgentMemory } from './support/harness.js';

const PACKAGE_DIR = new URL('..', import.meta.url).pathname;
const logger = createLogger({ service: 'document-work-test', level: 'silent' });
// Pages are served from 127.0.0.1; leases short, so a replica's crash is taken over soon.
const env = { ALLOW_PRIVATE_NETWORK_URLS: 'true', DOCUMENT_LEASE_MS: '2000' };

function page(text: string): string {
  return `<html><head><title>Help</title></head><body><main><h1>Returns</h1><p>${text}</p></main></body></html>`;
}

async function settled(documents: PromiseClient<typeof DocumentServiceService>, call: OutgoingCall, documentId: string, isDone: (document: Document) => boolean): Promise<Document> {
  return vi.waitFor(
    async () => {
      const { document } = await documents.getDocument({ documentId }, call);
      expect(document && isDone(document), `document ${documentId}: ${JSON.stringify(document)}`).toBe(true);
      return document!;
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe('work on documents across replicas', () => {
  ownDatabaseTest('a due document is leased to one replica at a time; a lease that ran out may be claimed again', async ({ database }) => {
    const orm = await openDatabase(database.url, logger);
    onTestFinished(() => orm.close());
    const replicas = [new DocumentsRepository(orm.em, 'replica-a'), new DocumentsRepository(orm.em, 'replica-b')];
    // The agent comes from a service that then stops: its own workers must not claim the document.
    const tenant = newTenant();
    const service = await startAgentMemory(database, { env });
    const agent = await service.createAgent(tenant);
    await service.stop();
    await database.query(
      `insert into memory_documents (id, tenant_id, agent_id, title, chunks, created_at, source, status, due_at) values ('doc_due', $1, $2, null, 0, now(), 'url', 'processing', now())`,
      [tenant.tenantId, agent.id],
    );
    const claims = await Promise.all(replicas.map((replica) => replica.claim(5, 60_000)));
    expect(claims.map((claimed) => claimed.map((document) => document.id)).flat()).toEqual(['doc_due']);
    expect((await Promise.all(replicas.map((replica) => replica.claim(5, 60_000)))).flat()).toEqual([]);
    await database.query(`update memory_documents set leased_until = now() - interval '1 second' where id = 'doc_due'`);
    const [again] = (await Promise.all(replicas.map((replica) => replica.claim(5, 60_000)))).flat();
    expect(again).toMatchObject({ id: 'doc_due', attempt: 2 });
  });

  ownDatabaseTest('a page is fetched again when due by one of two replicas, and re-chunked only when its text changed', { timeout: 60_000 }, async ({ database }) => {
    let text = 'Refunds are accepted within 30 days.';
    const pages = await startReceiver(() => ({ headers: { 'content-type': 'text/html' }, body: page(text) }));
    onTestFinished(() => pages.close());
    const [first, second] = [await startAgentMemory(database, { env }), await startAgentMemory(database, { env })];
    onTestFinished(async () => {
      await first.stop();
      await second.stop();
    });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await first.createAgent(tenant);
    const { document } = await first.documents.addPageDocument({ agentId: agent.id, url: pages.url('/returns'), refreshSeconds: 60 }, call);
    const ready = await settled(first.documents, call, document!.id, (current) => current.status === 'ready');
    expect(pages.requests).toHaveLength(1);

    // The interval passes: both replicas look for due work; one fetches, the text is the same.
    const dueNow = () => database.query(`update memory_documents set due_at = now() where id = $1`, [document!.id]);
    await dueNow();
    const refreshed = await settled(second.documents, call, document!.id, (current) => current.refreshedAt!.getTime() > ready.refreshedAt!.getTime());
    expect(pages.requests).toHaveLength(2);
    const [scheduled] = await database.query<{ due: Date }>(`select due_at as due from memory_documents where id = $1`, [document!.id]);
    expect(scheduled!.due.getTime() - refreshed.refreshedAt!.getTime()).toBe(60_000);
    expect(await eventsOf(database, tenant.tenantId, 'document.ready')).toHaveLength(1);

    text = 'Refunds are accepted within 45 days.';
    await dueNow();
    await settled(first.documents, call, document!.id, (current) => current.refreshedAt!.getTime() > refreshed.refreshedAt!.getTime());
    expect(pages.requests).toHaveLength(3);
    const events = await eventsOf(database, tenant.tenantId, 'document.ready');
    expect(events.map((event) => event.data['changed'])).toEqual([true, true]);
    const { chunks } = await first.documents.listDocumentChunks({ documentId: document!.id, page: undefined }, call);
    expect(chunks.map((chunk) => chunk.text)).toEqual([expect.stringContaining('45 days')]);
  });

  ownDatabaseTest('an embedding provider that fails leaves the document processing with the reason, and a later try makes it ready', { timeout: 30_000 }, async ({ database }) => {
    const hashing = new HashingEmbedder();
    let failures = 1;
    const flaky: Embedder = {
      model: hashing.model,
      dimensions: hashing.dimensions,
      embed: (texts, signal) => (failures-- > 0 ? Promise.reject(new DomainError('upstream_error', 'The embedding provider answered 503.')) : hashing.embed(texts, signal)),
    };
    const service = await startAgentMemory(database, { env, embedder: flaky });
    onTestFinished(() => service.stop());
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const upload = Readable.from([{ data: Buffer.from('# Returns\n\nRefunds within 30 days.\n') }, { header: { agentId: agent.id, filename: 'returns.md', contentType: 'text/markdown' } }]);
    const { document } = await service.documents.uploadDocument(upload, call);
    const waiting = await settled(service.documents, call, document!.id, (current) => current.error !== undefined);
    expect(waiting).toMatchObject({ status: 'processing', error: 'The embedding provider answered 503.' });
    const ready = await settled(service.documents, call, document!.id, (current) => current.status === 'ready');
    expect(ready).toMatchObject({ chunks: 1 });
    expect(ready.error).toBeUndefined();
    expect(await eventsOf(database, tenant.tenantId, 'document.failed')).toEqual([]);
  });

  ownDatabaseTest('a replica killed while it fetches a page leaves it to another, which stores it once', { timeout: 60_000 }, async ({ database }) => {
    const pages = await startReceiver({ hold: 'answer' });
    onTestFinished(() => pages.close());
    const child = await spawnChildService('test/support/agent-memory-process.ts', {
      cwd: PACKAGE_DIR,
      env: { DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', TOOL_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), ...env },
    });
    onTestFinished(() => child.kill());
    const channel = new GrpcChannel(`127.0.0.1:${child.ports[0]}`, { defaultDeadlineMs: 15_000 });
    onTestFinished(() => channel.close());
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const { agent } = await channel.client(AgentServiceService).createAgent({ name: 'Helper', type: 'assistant', memoryTypes: ['semantic'], tools: [] }, call);
    const { document } = await channel.client(DocumentServiceService).addPageDocument({ agentId: agent!.id, url: pages.url('/returns') }, call);
    await pages.waitFor(1);
    await child.kill();

    pages.answer({ headers: { 'content-type': 'text/html' }, body: page('Refunds are accepted within 30 days.') });
    const survivor = await startAgentMemory(database, { env });
    onTestFinished(() => survivor.stop());
    const ready = await settled(survivor.documents, call, document!.id, (current) => current.status === 'ready');
    expect(ready.chunks).toBe(1);
    const [stored] = await database.query<{ count: string }>(`select count(*) from memory_items where document_id = $1`, [document!.id]);
    expect(stored?.count).toBe('1');
    expect(await eventsOf(database, tenant.tenantId, 'document.ready')).toHaveLength(1);
  });
});

const execFileAsync = promisify(execFile);
/** An address outside every private and reserved range, put on the loopback interface for this test. */
const PUBLIC_TEST_ADDRESS = '11.255.255.254';

async function withPublicLoopbackAddress(): Promise<boolean> {
  try {
    await execFileAsync('ip', ['addr', 'add', `${PUBLIC_TEST_ADDRESS}/32`, 'dev', 'lo']);
  } catch (error) {
    if (!String((error as { stderr?: string }).stderr).includes('File exists')) return false;
  }
  onTestFinished(async () => {
    await execFileAsync('ip', ['addr', 'del', `${PUBLIC_TEST_ADDRESS}/32`, 'dev', 'lo']).catch(() => undefined);
  });
  return true;
}

describe('fetching a page through the outbound guard', () => {
  // A public address that answers here needs one on the loopback interface, which takes root (as CI runs).
  test('a public page that redirects to a private address is refused at that hop, and the private address never sees a request', async ({ skip }) => {
    if (!(await withPublicLoopbackAddress())) skip('adding an address to the loopback interface needs root');
    const secret = await startReceiver({ body: 'internal metadata' });
    onTestFinished(() => secret.close());
    const publicPage = createServer((_request, response) => response.writeHead(302, { location: secret.url('/latest/meta-data') }).end());
    publicPage.listen(0, PUBLIC_TEST_ADDRESS);
    await once(publicPage, 'listening');
    onTestFinished(() => void publicPage.close());
    const policy = new OutboundPolicy({ allowPrivateNetworks: false, resolve: (host) => (host === 'help.example.test' ? Promise.resolve([{ address: PUBLIC_TEST_ADDRESS, family: 4 }]) : systemResolver(host)) });
    const http = new OutboundHttp({ policy, userAgent: 'test' });
    onTestFinished(() => http.close());
    const url = `http://help.example.test:${(publicPage.address() as AddressInfo).port}/returns`;

    const refused = await fetchPage(http, url, { timeoutMs: 5_000, maxBytes: 1_048_576 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PageFetchError);
    expect((refused as PageFetchError).retryable).toBe(false);
    expect((refused as PageFetchError).message).toMatch(/127\.0\.0\.1/);
    expect(secret.requests).toHaveLength(0);
  });

  test('a page over the limit is refused without retrying', async () => {
    const big = await startReceiver({ headers: { 'content-type': 'text/html' }, body: 'x'.repeat(4_096) });
    onTestFinished(() => big.close());
    const http = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true }), userAgent: 'test' });
    onTestFinished(() => http.close());
    const refused = await fetchPage(http, big.url('/'), { timeoutMs: 5_000, maxBytes: 1_024 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ name: 'PageFetchError', retryable: false });
  });
});
