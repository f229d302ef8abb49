import { ApiResponseError } from '@agent-platform/client';
import type { Session } from './session.js';

/** How much of a form's body the browser has sent, in bytes. */
export interface UploadProgress {
  loaded: number;
  total: number;
}

interface Answer {
  status: number;
  statusText: string;
  body: unknown;
}

/**
 * POSTs a multipart form through XMLHttpRequest, the one browser API that reports how much of a
 * request body has gone (fetch does not), with what the client's calls carry (the token, the
 * tenant) and, like them, one token refresh and resend on a 401. Resolves to the JSON answer; an
 * error status rejects with the API's error as ApiResponseError, so a page shows a 413 or a 422
 * exactly as it shows a refusal of any other call.
 */
export async function postForm<Data>(session: Session, path: `/api/v1/${string}`, form: FormData, onProgress: (progress: UploadProgress) => void): Promise<Data> {
  let answer = await send(session, path, form, onProgress);
  if (answer.status === 401 && (await session.renewAfterUnauthorised())) answer = await send(session, path, form, onProgress);
  if (answer.status < 200 || answer.status > 299) throw new ApiResponseError(new Response(null, { status: answer.status, statusText: answer.statusText }), answer.body);
  return answer.body as Data;
}

function send(session: Session, path: string, form: FormData, onProgress: (progress: UploadProgress) => void): Promise<Answer> {
  const url = new URL(path, session.baseUrl);
  const headers = new Headers({ Accept: 'application/json' });
  session.authorise(url, headers);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    headers.forEach((value, name) => request.setRequestHeader(name, value));
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress({ loaded: event.loaded, total: event.total });
    });
    request.addEventListener('load', () => resolve({ status: request.status, statusText: request.statusText, body: parsed(request.responseText) }));
    // A TypeError is what fetch throws when nothing answers; describeError words it for people.
    request.addEventListener('error', () => reject(new TypeError('The upload did not reach the platform.')));
    request.send(form);
  });
}

/** The answer's JSON; text when something else answered (a proxy's page), as ApiResponseError keeps it. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
