import t from 'tap'
import { isGuid, newId } from '../../src/domain/ids'
import { itemAt } from '../helpers/items'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('newId makes time-ordered UUIDv7 GUIDs', async (t) => {
  const before = Date.now()
  const ids = Array.from({ length: 1000 }, () => newId())
  const after = Date.now()
  for (const id of ids.slice(0, 5)) {
    t.match(id, V7, `${id} is a version 7, RFC 9562 variant UUID`)
    t.ok(isGuid(id))
  }
  t.equal(new Set(ids).size, ids.length, 'all distinct')
  t.same([...ids].sort(), ids, 'ids made one after another sort in creation order (index inserts go to the end)')
  const millis = parseInt(itemAt(ids, 0).replace(/-/g, '').slice(0, 12), 16)
  t.ok(millis >= before && millis <= after, 'the first 48 bits are the creation time in ms (what docs/payments.md says the id reveals)')
})

t.test('isGuid accepts any case of the 8-4-4-4-12 form only', async (t) => {
  t.ok(isGuid('019AA9F2-3C41-7E2B-9D5A-4F0C6B2E8A17'))
  t.notOk(isGuid('019aa9f23c417e2b9d5a4f0c6b2e8a17'))
  t.notOk(isGuid('not-a-guid'))
})
