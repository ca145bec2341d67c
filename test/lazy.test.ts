// src/lazy.ts: loaded by the first use and shared by every later one, concurrent
// ones included; a load that failed is tried again by the next use.
import t from './tap.js'
import { lazily } from '../src/lazy.js'

t.test('nothing is loaded before the first use; concurrent and later uses share one load', async (t) => {
  let loads = 0
  const lazy = lazily(async () => { loads++; return { n: loads } })
  t.equal(lazy.started(), undefined, 'not started')
  t.equal(loads, 0)
  const [a, b] = await Promise.all([lazy.get(), lazy.get()])
  const c = await lazy.get()
  t.equal(loads, 1, 'one load')
  t.equal(a, b)
  t.equal(a, c)
  t.same(a, { n: 1 })
  t.equal(await lazy.started(), a, 'started gives the same value')
})

t.test('a load that failed fails its uses and is tried again by the next one', async (t) => {
  let loads = 0
  const lazy = lazily(async () => {
    loads++
    if (loads === 1) throw new Error('first load fails')
    return loads
  })
  const [first, second] = await Promise.allSettled([lazy.get(), lazy.get()])
  t.match(first, { status: 'rejected', reason: { message: 'first load fails' } })
  t.match(second, { status: 'rejected', reason: { message: 'first load fails' } }, 'a use made during the failing load shares its failure')
  t.equal(lazy.started(), undefined, 'the failure is forgotten')
  t.equal(await lazy.get(), 2, 'the next use loads again')
  t.equal(await lazy.get(), 2, 'and that load is kept')
  t.equal(loads, 2)
})
