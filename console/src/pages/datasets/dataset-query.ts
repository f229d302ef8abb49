import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';

/** GET /datasets/{dataset_id}; none until the id is known. */
export function useDataset(datasetId: string | undefined) {
  return useTenantQuery(['datasets', datasetId ?? ''], (client) => call(client.GET('/api/v1/datasets/{dataset_id}', { params: { path: { dataset_id: datasetId ?? '' } } })), { enabled: datasetId !== undefined });
}

/** The datasets a person picks from (an eval's): one page of the most the API gives. */
const DATASET_CHOICES = 100;

/** Under the lists' key, so that creating or deleting a dataset refreshes it too. */
export function useDatasetChoices() {
  return useTenantQuery(['datasets', 'list', 'choices'], (client) => call(client.GET('/api/v1/datasets', { params: { query: { per_page: DATASET_CHOICES } } })));
}
