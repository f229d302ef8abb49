import { useEffect, useRef, useState } from 'react';

/**
 * A destructive action asked twice: the first press shows the question with the real button and
 * Cancel inline (keyboard-friendly, no modal); Cancel puts focus back where it was.
 */
export function ConfirmButton({ label, question, confirmLabel, onConfirm, pending = false, accessibleLabel }: { label: string; question: string; confirmLabel: string; onConfirm: () => void; pending?: boolean; accessibleLabel?: string }) {
  const [asking, setAsking] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirm.current?.focus();
    else if (wasAsking.current) trigger.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button ref={trigger} type="button" className="danger" onClick={() => setAsking(true)} disabled={pending} aria-label={accessibleLabel}>
        {pending ? 'Deleting…' : label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        ref={confirm}
        type="button"
        className="danger"
        onClick={() => {
          wasAsking.current = false;
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
