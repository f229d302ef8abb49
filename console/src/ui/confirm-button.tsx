import { useRef, useState } from 'react';

/**
 * A destructive action asked for twice: the first press shows what will happen, with the button
 * that does it and one that takes it back (focused, so a stray Enter does no harm). Once
 * confirmed, the first button shows the action under way until `pending` ends; the caller shows
 * its error.
 */
export function ConfirmButton({
  label,
  accessibleLabel,
  question,
  confirmLabel,
  cancelLabel = 'Cancel',
  pending = false,
  pendingLabel = 'Working…',
  className = 'danger',
  onConfirm,
}: {
  label: string;
  /** The first button's name where its label alone is ambiguous (one per row of a list). */
  accessibleLabel?: string;
  question: string;
  confirmLabel: string;
  cancelLabel?: string;
  pending?: boolean;
  pendingLabel?: string;
  /** The first button's look: `danger`, or `secondary` beside a page's other actions. */
  className?: string;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  if (!asking) {
    return (
      <button ref={first} type="button" className={className} onClick={() => setAsking(true)} disabled={pending} aria-label={accessibleLabel}>
        {pending ? pendingLabel : label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button
        type="button"
        className="secondary"
        autoFocus
        onClick={() => {
          setAsking(false);
          // Back where the reader was: the first button, shown again once the question is gone.
          requestAnimationFrame(() => first.current?.focus());
        }}
      >
        {cancelLabel}
      </button>
    </span>
  );
}
