import { useDeferredValue, useMemo, type ReactNode } from 'react';
import { describeError } from '../../api/call.js';
import { drawnGraph, problemsByNode } from './graph-model.js';
import { GraphView } from './graph-view.js';
import { JsonField, parseJsonObject } from './json-field.js';

/**
 * A graph written as JSON beside its drawing: the drawing follows the text as it is typed, and
 * after a refused save each node the API named is marked with its messages (`nodes[i]…`).
 */
export function DefinitionEditor({
  label,
  hint,
  text,
  onText,
  localProblem,
  apiError,
  covers = () => true,
}: {
  label: string;
  hint: ReactNode;
  text: string;
  onText: (text: string) => void;
  localProblem: string | undefined;
  apiError: unknown;
  /** Which of the API's fields the text holds (the others have controls of their own). */
  covers?: (field: string) => boolean;
}) {
  const deferredText = useDeferredValue(text);
  const graph = useMemo(() => {
    const parsed = parseJsonObject(deferredText);
    return parsed.value ? drawnGraph(parsed.value.nodes, parsed.value.edges) : undefined;
  }, [deferredText]);
  const problems = useMemo(() => problemsByNode(apiError), [apiError]);
  const refused = describeError(apiError).fields.filter((detail) => covers(detail.field)).length;
  const problem = localProblem ?? (apiError && refused > 0 ? `The platform refused ${refused === 1 ? 'one field' : `${refused} fields`}: see the list above and the nodes marked in the drawing.` : undefined);
  return (
    <div className="wf-editor">
      <JsonField label={label} name="definition" value={text} onChange={onText} problem={problem} hint={hint} />
      <div className="wf-editor-preview">
        <h3>Drawing</h3>
        {graph ? <GraphView graph={graph} problems={problems} label="Drawing of the graph being edited" /> : <p className="muted">The drawing returns once the text is valid JSON.</p>}
      </div>
    </div>
  );
}
