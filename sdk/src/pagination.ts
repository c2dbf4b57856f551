/** One page of a list: `{ data, hasMore }`, newest first. */
export interface Page<Item> {
  data: Item[]
  hasMore: boolean
}

/**
 * Every item of a cursor-paged list, newest first, fetching the next page (`startingAfter` = the last
 * item's id) only when the previous one is used up. Stop early with `break`.
 */
export async function * paginate<Item extends { id: string }> (
  fetchPage: (startingAfter: string | undefined) => Promise<Page<Item>>
): AsyncGenerator<Item, void, undefined> {
  let startingAfter: string | undefined
  for (;;) {
    const page = await fetchPage(startingAfter)
    yield * page.data
    const last = page.data.at(-1)
    if (!page.hasMore || last === undefined) return
    startingAfter = last.id
  }
}
