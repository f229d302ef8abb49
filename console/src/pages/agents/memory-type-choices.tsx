import { ChoiceFieldset } from '../../ui/choice-fieldset.js';
import { MEMORY_TYPES } from '@agent-platform/client';

/** The memory an agent keeps, as checkboxes named `memory_types`, with the API's messages for them. */
export function MemoryTypeChoices({ error, checked }: { error: unknown; checked: readonly string[] }) {
  return (
    <ChoiceFieldset legend="Memory it keeps" field="memory_types" error={error}>
      {MEMORY_TYPES.map((memoryType) => (
        <label key={memoryType} className="checkbox">
          <input type="checkbox" name="memory_types" value={memoryType} defaultChecked={checked.includes(memoryType)} /> {memoryType}
        </label>
      ))}
    </ChoiceFieldset>
  );
}

