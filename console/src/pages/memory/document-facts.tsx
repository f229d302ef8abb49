import type { Citation, MemoryDocument } from '@agent-platform/client';

/** What each status says, in the list, on the document's page and to screen readers. */
const STATUS_LABELS: Record<MemoryDocument['status'], string> = {
  processing: 'Processing',
  ready: 'Ready',
  failed: 'Failed',
};

export const SOURCE_LABELS: Record<MemoryDocument['source'], string> = {
  text: 'Text',
  upload: 'File',
  url: 'Web page',
};

/**
 * How often a page may be fetched again: the form's choices, and how a document's interval is
 * said. Any other number of seconds (60 to 2,592,000) is the form's "Other" and said in seconds.
 */
export const REFRESH_CHOICES: readonly { label: string; seconds: number | undefined }[] = [
  { label: 'Never', seconds: undefined },
  { label: 'Hourly', seconds: 3_600 },
  { label: 'Daily', seconds: 86_400 },
  { label: 'Weekly', seconds: 604_800 },
];

export function refreshLabel(seconds: number | null): string {
  if (seconds === null) return 'Never';
  return REFRESH_CHOICES.find((choice) => choice.seconds === seconds)?.label ?? `Every ${seconds.toLocaleString()} seconds`;
}

export function isProcessing(document: Pick<MemoryDocument, 'status'>): boolean {
  return document.status === 'processing';
}

/** What names a document: its title, else its file name or address (a text without a title has neither). */
export function documentName(document: Pick<MemoryDocument, 'title' | 'filename' | 'url'>): string {
  return document.title ?? document.filename ?? document.url ?? 'Untitled text';
}

/** The status as a badge; a failure says why beside it. */
export function DocumentStatus({ document }: { document: Pick<MemoryDocument, 'status' | 'error'> }) {
  return (
    <span className="document-status">
      <span className={`badge badge-${document.status}`}>{STATUS_LABELS[document.status]}</span>
      {document.status === 'failed' && document.error ? <span className="document-error">{document.error}</span> : null}
    </span>
  );
}

/** A size as a person reads it: 512 bytes, 3.4 KiB, 1.2 MiB (the API's limits are in MiB). */
export function formatBytes(bytes: number): string {
  if (bytes < 1_024) return `${bytes.toLocaleString()} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1_048_576) return `${(bytes / 1_024).toFixed(1)} KiB`;
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

/** Where a passage sits: its page and the headings it is under ("p. 2 · Section 2 › Refund window"). */
export function passagePlace(passage: Pick<Citation, 'page' | 'heading'>): string[] {
  return [...(passage.page === null ? [] : [`p. ${passage.page}`]), ...(passage.heading.length === 0 ? [] : [passage.heading.join(' › ')])];
}
