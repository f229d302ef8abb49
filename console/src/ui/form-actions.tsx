import { useState, type ReactNode } from 'react';

/**
 * A form's buttons: its submit, which says it is under way while `pending` (and cannot be pressed
 * while `disabled`: nothing to send yet), and the way out of the form (Cancel) where there is one;
 * `children` are further actions after them.
 */
export function FormActions({
  submitLabel,
  pendingLabel,
  pending = false,
  disabled = false,
  onCancel,
  cancelLabel = 'Cancel',
  children,
}: {
  submitLabel: string;
  pendingLabel?: string;
  pending?: boolean;
  disabled?: boolean;
  onCancel?: () => void;
  cancelLabel?: string;
  children?: ReactNode;
}) {
  return (
    <div className="form-actions">
      <button type="submit" disabled={pending || disabled}>
        {pending && pendingLabel ? pendingLabel : submitLabel}
      </button>
      {onCancel ? (
        <button type="button" className="secondary" onClick={onCancel}>
          {cancelLabel}
        </button>
      ) : null}
      {children}
    </div>
  );
}

/**
 * A page's create form and what it last made: opening the form forgets what was made before (a
 * secret shown once, a note of who was added); the form's success closes it and keeps its result.
 */
export function useCreateForm<Made>() {
  const [open, setOpen] = useState(false);
  const [made, setMade] = useState<Made>();
  return {
    open,
    made,
    start: () => {
      setMade(undefined);
      setOpen(true);
    },
    cancel: () => setOpen(false),
    done: (result: Made) => {
      setOpen(false);
      setMade(result);
    },
    dismiss: () => setMade(undefined),
  };
}
