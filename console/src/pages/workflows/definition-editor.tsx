import { useDeferredValue, useMemo, type ReactNode } from 'react';
import { describeError } from '../../api/call.js';
import { parseJsonObject } from '../../api/local-errors.js';
import { JsonField } from '../../ui/json-field.js';
import { drawnGraph, problemsByNode } from './graph-model.js';
import { GraphView } from './graph-view.js';

/**
 * A graph written as JSON beside its drawing: the drawing follows the text as it is typed, and
 * after a refused save each node the API named is marked with its messages (`nodes[i]…`).
 */
export function DefinitionEditor({
  label,
  field,
  hint,
  text,
  onText,
  error,
  covers = () => true,
}: {
  label: string;
  /** The text's own field, which a mistake found before sending names. */
  field: string;
  hint: ReactNode;
  text: string;
  onText: (text: string) => void;
  /** The save's error: a mistake found in the text before sending, or the API's answer. */
  error: unknown;
  /** Which of the API's fields the text holds (the others have controls of their own). */
  covers?: (field: string) => boolean;
}) {
  const deferredText = useDeferredValue(text);
  const graph = useMemo(() => {
    const parsed = parseJsonObject(deferredText, field);
    return parsed.value ? drawnGraph(parsed.value.nodes, parsed.value.edges) : undefined;
  }, [deferredText, field]);
  const problems = useMemo(() => problemsByNode(error), [error]);
  const refused = describeError(error).fields.filter((detail) => covers(detail.field)).length;
  const summary = refused > 0 ? `The platform refused ${refused === 1 ? 'one field' : `${refused} fields`}: see the list above and the nodes marked in the drawing.` : undefined;
  return (
    <div className="wf-editor">
      <JsonField label={label} field={field} error={error} message={summary} hint={hint} className="code json-input" rows={14} value={text} onChange={(event) => onText(event.target.value)} />
      <div className="wf-editor-preview">
        <h3>Drawing</h3>
        {graph ? <GraphView graph={graph} problems={problems} label="Drawing of the graph being edited" /> : <p className="muted">The drawing returns once the text is valid JSON.</p>}
      </div>
    </div>
  );
}
