import { useAgentChoices } from '../agents/agent-query.js';
import { useDatasetChoices } from '../datasets/dataset-query.js';

/**
 * The names of the agents and datasets an eval page chooses among and lists: from the lists the
 * filters and the form offer, so a table of evals costs no request a row. One beyond those lists
 * (or deleted since: an eval outlives its dataset) is named by its id.
 */
export function useEvalNames() {
  const agents = useAgentChoices();
  const datasets = useDatasetChoices();
  const agentNames = new Map(agents.data?.agents.map((agent) => [agent.id, agent.name]));
  const datasetNames = new Map(datasets.data?.items.map((dataset) => [dataset.id, dataset.name]));
  return {
    agents,
    datasets,
    agentName: (agentId: string) => agentNames.get(agentId),
    datasetName: (datasetId: string) => datasetNames.get(datasetId),
  };
}

export type EvalNames = ReturnType<typeof useEvalNames>;
