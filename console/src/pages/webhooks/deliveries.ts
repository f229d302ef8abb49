import type { WebhookDelivery } from '@agent-platform/client';
import { useQueryClient } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useSession } from '../../api/session-context.js';

/** Not faster than this while something is live (the free plan allows 60 requests a minute). */
const POLL_MS = 3_000;
/** A retry hours away is still looked at now and then, in case a replay or re-enable changed it. */
const MAX_POLL_MS = 60_000;

/**
 * How long until deliveries are worth asking about again: soon after the earliest pending one's
 * next attempt, or never when none is pending (delivered and failed are final).
 */
export function pollWhilePending(deliveries: readonly Pick<WebhookDelivery, 'status' | 'next_attempt_at'>[] | undefined): number | false {
  const pending = (deliveries ?? []).filter((delivery) => delivery.status === 'pending');
  if (pending.length === 0) return false;
  // No next attempt scheduled while pending: one is under way now.
  const dueAt = Math.min(...pending.map((delivery) => (delivery.next_attempt_at ? Date.parse(delivery.next_attempt_at) : 0)));
  return Math.min(MAX_POLL_MS, Math.max(POLL_MS, dueAt - Date.now() + 1_000));
}

/**
 * Refetches parts of one webhook's page: the webhook itself or its delivery log, without the
 * rest (each refetch is a request the tenant's rate limit counts).
 */
export function useWebhookRefresh(webhookId: string) {
  const queryClient = useQueryClient();
  const { tenantId } = useSession().state;
  return useMemo(
    () => ({
      webhook: () => queryClient.invalidateQueries({ queryKey: [tenantId, 'webhooks', webhookId], exact: true }),
      deliveries: () => queryClient.invalidateQueries({ queryKey: [tenantId, 'webhooks', webhookId, 'deliveries'] }),
    }),
    [queryClient, tenantId, webhookId],
  );
}
