import type { MemoryDocument } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { useId, useRef, useState } from 'react';
import { useDropzone } from 'react-dropzone';
import { useInvalidate, useSession } from '../../api/session-context.js';
import { postForm, type UploadProgress } from '../../api/upload.js';
import { ErrorNotice } from '../../ui/feedback.js';
import { documentName, formatBytes } from './document-facts.js';

/** One file sent (or being sent): how far along, and what came of it. */
interface Upload {
  key: number;
  name: string;
  progress: UploadProgress;
  document?: MemoryDocument;
  error?: unknown;
}

/** What the platform reads, as the hint says it and the file dialog offers it first. */
const ACCEPTED = '.pdf,.docx,.html,.htm,.md,.markdown,.txt,.csv,.json';

/**
 * Files into the agent's memory: dropped on the area or chosen with its button, each sent as it
 * comes with a bar of how much has gone (XMLHttpRequest: fetch reports no upload progress), then
 * the document it made (parsed in the background, so the list shows it processing) or the API's
 * refusal (413 too large, 422 a file it cannot read).
 */
export function DocumentUpload({ agentId }: { agentId: string }) {
  const { session } = useSession();
  const invalidate = useInvalidate();
  const titleId = useId();
  const [uploads, setUploads] = useState<Upload[]>([]);
  const count = useRef(0);
  const update = (key: number, change: Partial<Upload>) => setUploads((current) => current.map((upload) => (upload.key === key ? { ...upload, ...change } : upload)));

  const send = (file: File) => {
    count.current += 1;
    const key = count.current;
    setUploads((current) => [...current, { key, name: file.name, progress: { loaded: 0, total: file.size } }]);
    const form = new FormData();
    // The fields before the file, so the API knows the agent before the bytes arrive.
    form.append('agent_id', agentId);
    form.append('file', file, file.name);
    postForm<MemoryDocument>(session, '/api/v1/memory/documents', form, (progress) => update(key, { progress }))
      .then((document) => {
        update(key, { document, progress: { loaded: file.size, total: file.size } });
        return invalidate('memory');
      })
      .catch((error: unknown) => update(key, { error }));
  };

  const { getRootProps, getInputProps, isDragActive, open } = useDropzone({
    onDrop: (files: File[]) => files.forEach(send),
    // The button opens the dialog (a keyboard reaches it like any button); the area only takes drops.
    noClick: true,
    noKeyboard: true,
  });
  const finished = uploads.filter((upload) => upload.document || upload.error);

  return (
    <section className="card document-upload" aria-labelledby={titleId}>
      <h2 id={titleId}>Upload files</h2>
      <div {...getRootProps({ className: isDragActive ? 'dropzone dropzone-active' : 'dropzone', role: 'group', 'aria-labelledby': titleId })}>
        <input {...getInputProps({ accept: ACCEPTED, 'aria-label': 'Files to upload' })} />
        <p>{isDragActive ? 'Drop the files to upload them.' : 'Drag files here, or'}</p>
        <button type="button" onClick={open}>
          Choose files
        </button>
        <small className="hint">PDF, DOCX, HTML, Markdown, plain text, CSV or JSON, up to 20 MiB each. Each is cut into passages the agent's turns find and cite.</small>
      </div>
      {uploads.length > 0 ? (
        <ul className="uploads" aria-label="Uploads">
          {uploads.map((upload) => (
            <UploadRow key={upload.key} upload={upload} />
          ))}
        </ul>
      ) : null}
      {finished.length > 0 && finished.length === uploads.length ? (
        <button type="button" className="secondary" onClick={() => setUploads([])}>
          Clear the list
        </button>
      ) : null}
    </section>
  );
}

function UploadRow({ upload }: { upload: Upload }) {
  const barId = useId();
  const { loaded, total } = upload.progress;
  const percent = total === 0 ? 100 : Math.round((loaded / total) * 100);
  return (
    <li className="upload">
      <label htmlFor={barId} className="upload-name">
        {upload.name}
      </label>
      <progress id={barId} max={total || 1} value={total === 0 ? 1 : loaded} />
      <span className="upload-state" role="status">
        {upload.error ? 'Refused' : upload.document ? 'Uploaded' : `${percent}% of ${formatBytes(total)}`}
      </span>
      {upload.document ? (
        <Link to="/memory/documents/$documentId" params={{ documentId: upload.document.id }} search={{}} aria-label={`Open ${documentName(upload.document)}`}>
          Open
        </Link>
      ) : null}
      <ErrorNotice error={upload.error} title={`Could not upload ${upload.name}`} />
    </li>
  );
}
