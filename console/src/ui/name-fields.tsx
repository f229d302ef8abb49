import { Field } from './form.js';

/** The name of something new and its description for people: the two fields its create form begins with (the API's `name`, `description`). */
export function NameAndDescription({ error }: { error: unknown }) {
  return (
    <>
      <Field label="Name" field="name" error={error}>
        <input name="name" required autoFocus />
      </Field>
      <Field label="Description" field="description" error={error}>
        <textarea name="description" rows={2} />
      </Field>
    </>
  );
}
