import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';

const validatePage = (search: Record<string, unknown>): { page?: number } => {
  const page = Number(search.page);
  return Number.isInteger(page) && page > 1 ? { page } : {};
};

/**
 * A webhook's page: which page of its deliveries is shown (the trail of cursors that led there,
 * so Newer can go back) and which delivery's attempts are open.
 */
export interface WebhookSearch {
  cursors?: string[];
  delivery?: string;
}

const validateWebhookSearch = (search: Record<string, unknown>): WebhookSearch => {
  const cursors = Array.isArray(search.cursors) ? search.cursors.filter((cursor): cursor is string => typeof cursor === 'string' && cursor !== '') : [];
  const delivery = typeof search.delivery === 'string' && search.delivery !== '' ? search.delivery : undefined;
  return { ...(cursors.length > 0 ? { cursors } : {}), ...(delivery ? { delivery } : {}) };
};

export const webhooksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'webhooks',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./webhooks-page.js'), 'WebhooksPage'),
});
export const webhookRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'webhooks/$webhookId',
  validateSearch: validateWebhookSearch,
  component: lazyRouteComponent(() => import('./webhook-page.js'), 'WebhookPage'),
});
export const webhooksRoutes = [webhooksRoute, webhookRoute] as const;
