/** The values of a submitted form's ticked checkboxes named `name`, in the form's order (`formValues` keeps one a name). */
export function checkedValues(form: HTMLFormElement, name: string): string[] {
  return new FormData(form).getAll(name).filter((value): value is string => typeof value === 'string');
}
