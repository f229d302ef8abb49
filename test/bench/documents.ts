/** Words enough for ~1,250 chunks of ~1,000 characters per document; varied so chunks differ. */
export function documentText(index: number): string {
  const words = ['refund', 'parcel', 'invoice', 'warranty', 'battery', 'courier', 'Lisbon', 'Porto', 'order', 'customer', 'payment', 'delivery'];
  const sentences: string[] = [];
  // Just under the 1,000,000-character limit of a document.
  for (let n = 0, length = 0; length < 990_000; n += 1) {
    const sentence = `Note ${index}-${n}: the ${words[n % words.length]} of ref_${index}_${n} concerns ${words[(n * 7) % words.length]} and ${words[(n * 5 + index) % words.length]}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  return sentences.join(' ');
}
