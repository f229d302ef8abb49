import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { cursorTrail, definedOnly, optionalText, validatePage } from '../../routes/search-params.js';

/**
 * A webhook's page: which page of its deliveries is shown (the trail of cursors that led there,
 * so Newer can go back) and which delivery's attempts are open.
 */
export interface WebhookSearch {
  cursors?: string[];
  delivery?: string;
}

const validateWebhookSearch = (search: Record<string, unknown>): WebhookSearch => definedOnly({ cursors: cursorTrail(search.cursors), delivery: optionalText(search.delivery) });

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
