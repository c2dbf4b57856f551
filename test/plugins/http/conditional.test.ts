import t from 'tap'
import { ifMatchMatches, ifNoneMatchMatches, parseEntityTag, parseEntityTagList, strongMatch, weakMatch } from '../../../plugins/http/conditional'

t.test('parsing entity tags and lists', async (t) => {
  t.same(parseEntityTag('"abc"'), { weak: false, opaque: 'abc' })
  t.same(parseEntityTag(' W/"abc" '), { weak: true, opaque: 'abc' })
  t.same(parseEntityTag('""'), { weak: false, opaque: '' })
  t.equal(parseEntityTag('abc'), undefined)
  t.equal(parseEntityTag('"a"b"'), undefined)
  t.equal(parseEntityTagList(' * '), '*')
  t.same(parseEntityTagList('"1", W/"2",junk, "3"'), [
    { weak: false, opaque: '1' }, { weak: true, opaque: '2' }, { weak: false, opaque: '3' }
  ])
  t.same(parseEntityTagList(''), [])
})

t.test('RFC 9110 §8.8.3.2 comparison table', async (t) => {
  const w1 = { weak: true, opaque: '1' }
  const w2 = { weak: true, opaque: '2' }
  const s1 = { weak: false, opaque: '1' }
  t.notOk(strongMatch(w1, w1)); t.ok(weakMatch(w1, w1))
  t.notOk(strongMatch(w1, w2)); t.notOk(weakMatch(w1, w2))
  t.notOk(strongMatch(w1, s1)); t.ok(weakMatch(w1, s1))
  t.ok(strongMatch(s1, s1)); t.ok(weakMatch(s1, s1))
})

t.test('If-None-Match (weak) and If-Match (strong)', async (t) => {
  t.ok(ifNoneMatchMatches('W/"1"', '"1"'))
  t.ok(ifNoneMatchMatches('*', '"1"'))
  t.notOk(ifNoneMatchMatches('"2"', '"1"'))
  t.notOk(ifNoneMatchMatches('"1"', 'not-a-tag'))
  t.ok(ifMatchMatches('"0", "1"', '"1"'))
  t.ok(ifMatchMatches('*', '"1"'))
  t.notOk(ifMatchMatches('W/"1"', '"1"'))
  t.notOk(ifMatchMatches('"1"', 'W/"1"'))
  t.notOk(ifMatchMatches('"1"', 'not-a-tag'))
})
