import { useId, useRef, useState, type ReactNode } from 'react';

type CopyState = 'idle' | 'copied' | 'select';

/**
 * A secret the API returns once (an API key, a webhook's signing secret): shown with a copy
 * button and the warning that it cannot be read again. Dismissing it forgets it.
 */
export function OneTimeSecret({ title, label, secret, onDismiss, children }: { title: string; label: string; secret: string; onDismiss: () => void; children?: ReactNode }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copyState, setCopyState] = useState<CopyState>('idle');
  const selectForCopy = () => {
    input.current?.select();
    setCopyState('select');
  };
  const copy = () => {
    // The Clipboard API exists only in secure contexts (https, localhost); elsewhere the text is selected for the reader to copy.
    if (!navigator.clipboard) return selectForCopy();
    navigator.clipboard.writeText(secret).then(() => setCopyState('copied'), selectForCopy);
  };
  return (
    <section className="card secret-card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p className="secret-warning" id={`${id}-warning`}>
        <strong>Copy it now:</strong> it is not shown again. Keep it somewhere safe; anyone who has it can use it.
      </p>
      <div className="secret-row">
        <label htmlFor={`${id}-value`} className="secret-label">
          {label}
        </label>
        <input id={`${id}-value`} ref={input} className="secret-value" readOnly value={secret} aria-describedby={`${id}-warning`} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" className="secret-copy-status">
        {copyState === 'copied' ? 'Copied to the clipboard.' : copyState === 'select' ? 'Selected: press Ctrl+C (⌘C) to copy.' : ''}
      </p>
      {children}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={onDismiss}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
