import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

/** The OTLP/JSON span fields the tests read, with its resource's `service.name` as `service`. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
  /** Attribute values flattened to strings, numbers and booleans. */
  attributes: Record<string, string | number | boolean>;
}

interface OtlpExport {
  resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans: (Omit<OtlpSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[] }[] }[];
}

export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface OtlpCollector {
  /** `http://127.0.0.1:<port>`, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every span received so far. */
  spans: OtlpSpan[];
  close(): Promise<void>;
}

function flatten(attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    const flat = value.stringValue ?? value.boolValue ?? value.doubleValue ?? (value.intValue === undefined ? undefined : Number(value.intValue));
    if (flat !== undefined) result[key] = flat;
  }
  return result;
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
        for (const resource of payload.resourceSpans) {
          const service = String(flatten(resource.resource?.attributes)['service.name'] ?? '');
          for (const scope of resource.scopeSpans) {
            for (const span of scope.spans) spans.push({ ...span, service, attributes: flatten(span.attributes) });
          }
        }
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

/** True when `ancestor` is `span`'s parent, or its parent's, and so on, within `spans`. */
export function descendsFrom(span: OtlpSpan | undefined, ancestor: OtlpSpan | undefined, spans: readonly OtlpSpan[]): boolean {
  if (!span || !ancestor) return false;
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  for (let parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined; parent; parent = parent.parentSpanId ? byId.get(parent.parentSpanId) : undefined) {
    if (parent.spanId === ancestor.spanId) return true;
  }
  return false;
}

/** The spans as a readable tree, for failure messages. */
export function describeTrace(spans: readonly OtlpSpan[]): string {
  const children = new Map<string | undefined, OtlpSpan[]>();
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      lines.push(`${'  '.repeat(depth)}${span.service}: ${span.name} (kind ${span.kind})`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
