import './runs.css';
import { useMutation } from '@tanstack/react-query';
import { call } from '../../api/call.js';
import { useClient, useInvalidate } from '../../api/session-context.js';
import { ErrorNotice } from '../../ui/feedback.js';

const CHOICES = [
  { score: 1, label: 'Good answer', className: 'thumb thumb-up' },
  { score: -1, label: 'Bad answer', className: 'thumb thumb-down' },
] as const;

/**
 * Thumbs up and down on a run (POST /runs/{run_id}/feedback; the last score wins): the one given
 * is pressed, the other replaces it, and pressing the given one again takes it back to neutral (0).
 * `score` is the run's as last read; once scored here, the API's answer is shown instead.
 */
export function RunFeedback({ runId, score }: { runId: string; score: number | null | undefined }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: (next: number) => call(client.POST('/api/v1/runs/{run_id}/feedback', { params: { path: { run_id: runId } }, body: { score: next } })),
    // The run's page, the runs list and the stats' feedback mean all read it.
    onSuccess: () => invalidate('runs'),
  });
  const given = mutation.isPending ? mutation.variables : mutation.data ? mutation.data.feedback?.score : score;
  return (
    <span className="run-feedback" role="group" aria-label="Feedback">
      {CHOICES.map((choice) => (
        <button
          key={choice.score}
          type="button"
          className={choice.className}
          aria-pressed={given === choice.score}
          aria-label={choice.label}
          title={choice.label}
          disabled={mutation.isPending}
          onClick={() => mutation.mutate(given === choice.score ? 0 : choice.score)}
        >
          <ThumbIcon />
        </button>
      ))}
      <ErrorNotice error={mutation.error} title="Could not save the feedback" />
    </span>
  );
}

/** A thumb pointing up; the down button turns it over (runs.css). */
function ThumbIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
      <path fill="currentColor" d="M2 10h4v11H2zM8 21h9.4a2 2 0 0 0 1.95-1.57l1.6-7A2 2 0 0 0 19 10h-5.4l.85-4.2A1.8 1.8 0 0 0 12.7 3.6L8 9.6z" />
    </svg>
  );
}
