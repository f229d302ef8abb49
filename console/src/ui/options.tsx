/** The options of a select, one for each of `values`; `blank` names the empty choice where there is one. */
export function Options({ values, blank }: { values: readonly string[]; blank?: string }) {
  return (
    <>
      {blank === undefined ? null : <option value="">{blank}</option>}
      {values.map((value) => (
        <option key={value} value={value}>
          {value}
        </option>
      ))}
    </>
  );
}
