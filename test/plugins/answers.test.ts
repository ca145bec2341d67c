// The bounded store of answers already written (plugins/answers.ts): by bytes,
// least recently used out first, an oversized answer never kept, 0 keeps nothing.
// What recent pages of a list showed (RecentVersions): each project's latest
// version, bounded per page's scope and over all of them.
import t from 'tap'
import { AnswerCache, answerKey, RecentVersions } from '../../src/plugins/answers.js'

const bytes = (n: number, fill = 'x') => Buffer.alloc(n, fill)

t.test('keeps answers within its bound, dropping the least recently used first', async (t) => {
  const cache = new AnswerCache(1600)
  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, bytes(100, key))
  t.equal(cache.bytes, 400)
  t.same(cache.get('a'), bytes(100, 'a'), 'an answer comes back whole')
  // 'a' was used last: b, c and d are now the oldest, in that order.
  for (let i = 0; i < 15; i++) cache.set(`n${i}`, bytes(100))
  t.equal(cache.bytes, 1600, 'filled to the bound, not past it')
  t.equal(cache.get('b'), undefined, 'the least recently used went first')
  t.equal(cache.get('c'), undefined)
  t.equal(cache.get('d'), undefined)
  t.same(cache.get('a'), bytes(100, 'a'), 'the one used since stayed')
  t.equal(cache.count, 16)
  t.equal(cache.hits, 2)
  t.equal(cache.misses, 3)
})

t.test('a part of an answer: counted apart, and made recent only when asked', async (t) => {
  for (const recent of [true, false]) {
    const cache = new AnswerCache(1600)
    for (const key of ['a', 'b']) cache.set(key, bytes(100, key))
    t.same(cache.part('a', recent), bytes(100, 'a'), 'the part comes back whole')
    t.equal(cache.part('z', recent), undefined, 'none under another key')
    t.same([cache.partHits, cache.hits, cache.misses], [1, 0, 0], 'counted among the parts, not the answers')
    // Filled past the bound by one: the least recently used goes.
    for (let i = 0; i < 15; i++) cache.set(`n${i}`, bytes(100))
    t.equal(cache.peek('a') === undefined, !recent, recent ? 'made recent: a stayed' : 'not made recent: a went first')
    t.equal(cache.peek('b') === undefined, recent, recent ? 'b went first' : 'b stayed')
  }
})

t.test('an answer kept again under its key replaces the old one and is counted once', async (t) => {
  const cache = new AnswerCache(1600)
  cache.set('a', bytes(100))
  cache.set('a', bytes(60, 'y'))
  t.equal(cache.bytes, 60)
  t.equal(cache.count, 1)
  t.same(cache.get('a'), bytes(60, 'y'))
})

t.test('an answer larger than a sixteenth of the bound is not kept, and pushes nothing out', async (t) => {
  const cache = new AnswerCache(1600)
  cache.set('small', bytes(100))
  cache.set('large', bytes(101))
  t.equal(cache.get('large'), undefined)
  t.equal(cache.count, 1)
  t.equal(cache.bytes, 100)
})

t.test('a bound of 0 keeps nothing', async (t) => {
  const cache = new AnswerCache(0)
  cache.set('a', bytes(1))
  t.equal(cache.get('a'), undefined)
  t.equal(cache.bytes, 0)
})

t.test('a key is a digest of the kind and of every text, each text apart', async (t) => {
  t.match(answerKey('project', '70', '{"id":1}'), /^[A-Za-z0-9_-]{43}$/)
  t.equal(answerKey('project', '70', '{"id":1}'), answerKey('project', '70', '{"id":1}'))
  t.not(answerKey('project', '70', '{"id":1}'), answerKey('project', '100', '{"id":1}'), 'another access level')
  t.not(answerKey('project', '70', '{"id":1}'), answerKey('notifications', '70', '{"id":1}'), 'another kind')
  t.not(answerKey('project', '7', '0{"id":1}'), answerKey('project', '70', '{"id":1}'), 'texts are not run together')
  t.not(answerKey('project', 'a\n1\nb'), answerKey('project', 'a', 'b'), 'whatever they hold')
})

t.test('recent pages: each project\'s latest version by scope, most recent last, within both bounds', async (t) => {
  const recent = new RecentVersions(10, 4)
  t.same([...recent.of('first page')], [], 'nothing before a page is shown')
  recent.remember('first page', [{ id: 'a', version: 'a 1' }, { id: 'b', version: 'b 1' }])
  recent.remember('first page', [{ id: 'c', version: 'c 1' }, { id: 'a', version: 'a 2' }])
  t.same([...recent.of('first page')], ['b 1', 'c 1', 'a 2'], 'a project shown again is at its new version only, as the most recent')
  recent.remember('first page', [{ id: 'b', version: null }])
  t.same([...recent.of('first page')], ['c 1', 'a 2'], 'a project shown without a version is at none')
  recent.remember('first page', [{ id: 'b', version: 'b 1' }])
  t.same([...recent.of('another page')], [], 'scopes are apart')
  recent.remember('first page', [{ id: 'd', version: 'd 1' }, { id: 'e', version: 'e 1' }])
  t.same([...recent.of('first page')], ['a 2', 'b 1', 'd 1', 'e 1'], 'at most 4 a scope: the one shown longest ago goes')
  t.equal(recent.count, 4)

  for (const scope of ['x', 'y', 'z']) recent.remember(scope, [{ id: `${scope}1`, version: '1' }, { id: `${scope}2`, version: '2' }])
  t.equal(recent.count, 10, 'full')
  recent.remember('x', [{ id: 'x3', version: '3' }])
  t.same([...recent.of('first page')], [], 'past the bound, the scope shown longest ago goes whole')
  t.same([...recent.of('x')], ['1', '2', '3'])
  t.equal(recent.count, 7)
  t.equal(recent.scopeCount, 3)
  for (let i = 0; i < 100; i++) recent.remember(`filters that match nothing ${i}`, [])
  t.equal(recent.scopeCount, 3, 'an empty page leaves no scope')
})
