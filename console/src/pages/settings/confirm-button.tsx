import { useState } from 'react';
import './settings.css';

/**
 * A destructive action asked for twice: the first press shows what will happen, with the button
 * that does it (focused) and one that takes it back.
 */
export function ConfirmButton({ label, question, confirmLabel, pending, onConfirm, accessibleLabel }: { label: string; question: string; confirmLabel: string; pending?: boolean; onConfirm: () => void; accessibleLabel?: string }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)} disabled={pending} aria-label={accessibleLabel}>
        {pending ? 'Working…' : label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
