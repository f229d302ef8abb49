import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useClient, useSession } from '../../api/session-context.js';

/** Deletes a dataset with its items, then shows the list (from the dataset's page, or where it already is). */
export function useDeleteDataset(datasetId: string) {
  const client = useClient();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { state } = useSession();
  return useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/datasets/{dataset_id}', { params: { path: { dataset_id: datasetId } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [state.tenantId, 'datasets', 'list'] });
      await navigate({ to: '/datasets' });
      // The dataset's own queries would answer 404 now: drop them rather than refetch them.
      queryClient.removeQueries({ queryKey: [state.tenantId, 'datasets', datasetId] });
    },
  });
}
