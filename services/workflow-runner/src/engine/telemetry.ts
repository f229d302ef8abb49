import { restoreTraceContext, type TraceCarrier } from '@agent-platform/kit/events';
import { context, metrics, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { RunnableExecution } from '../executions/execution-store.js';
import type { WorkflowNode } from '../workflows/graph.js';

const tracer = trace.getTracer('@agent-platform/workflow-runner');
const meter = metrics.getMeter('@agent-platform/workflow-runner');

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const executionDuration = meter.createHistogram('workflow.execution.duration', {
  unit: 's',
  description: 'Duration of workflow executions, from start to their final record, by outcome and trigger.',
  advice: { explicitBucketBoundaries: DURATION_BUCKETS },
});
const nodeDuration = meter.createHistogram('workflow.node.duration', {
  unit: 's',
  description: 'Duration of workflow node runs, by node type and outcome.',
  advice: { explicitBucketBoundaries: DURATION_BUCKETS },
});

/**
 * Runs (or resumes) an execution under a span in the trace of the call that started it, so its
 * nodes, their gRPC and HTTP calls and its completion event all join that trace, on whichever
 * runner it runs.
 */
export function traceExecution<T>(execution: RunnableExecution, run: () => Promise<T>): Promise<T> {
  const parent = restoreTraceContext(execution.trace satisfies TraceCarrier | null);
  const span = tracer.startSpan(
    'workflow.execute',
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'workflow.id': execution.workflowId,
        'workflow.execution.id': execution.id,
        'workflow.execution.trigger': execution.trigger,
        'workflow.execution.resumed': execution.recorded.length > 0,
      },
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), run).finally(() => span.end());
}

/** Marks the execution's span and records its duration once its outcome is written. */
export function executionFinished(execution: RunnableExecution, status: string, durationMs: number): void {
  const span = trace.getActiveSpan();
  span?.setAttribute('workflow.execution.status', status);
  if (status !== 'completed') span?.setStatus({ code: SpanStatusCode.ERROR });
  executionDuration.record(durationMs / 1000, { 'workflow.execution.status': status, 'workflow.execution.trigger': execution.trigger });
}

/** A node's run under its own span (`workflow.node <type>`), measured by type and outcome. */
export async function traceNode<T extends { record: { status: string; error: string | null } }>(node: WorkflowNode, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  return tracer.startActiveSpan(
    `workflow.node ${node.type}`,
    { kind: SpanKind.INTERNAL, attributes: { 'workflow.node.id': node.id, 'workflow.node.type': node.type } },
    async (span: Span) => {
      try {
        const result = await run();
        const { status, error } = result.record;
        span.setAttribute('workflow.node.status', status);
        if (status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
        nodeDuration.record((performance.now() - started) / 1000, { 'workflow.node.type': node.type, 'workflow.node.status': status });
        return result;
      } finally {
        span.end();
      }
    },
  );
}
