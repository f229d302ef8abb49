import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The OTLP/JSON span fields the tests read. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

interface OtlpExport {
  resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
}

export const SPAN_KIND = { SERVER: 2, CLIENT: 3, CONSUMER: 5 } as const;

export interface OtlpCollector {
  /** `http://127.0.0.1:<port>`, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every span received so far. */
  spans: OtlpSpan[];
  close(): Promise<void>;
}

/** A collector that speaks OTLP/HTTP with JSON bodies, as the exporter sends them. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: OtlpSpan[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const payload = JSON.parse(body) as OtlpExport;
        for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
