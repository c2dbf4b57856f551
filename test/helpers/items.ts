/** The item at `index`; throws (failing the test with a clear message) when the list is shorter. */
export function itemAt<T> (items: readonly T[], index: number): T {
  const item = items[index]
  if (item === undefined) throw new Error(`expected an item at index ${index}, got ${items.length} item(s)`)
  return item
}
