// The `t` of a test file. Run alone (`npx tap test/http/errors.test.ts`), a file
// gets tap's root, as `import t from 'tap'` gives it. Run in a group (test/group.ts),
// several files share one process, one after another, and each gets the subtest the
// group opened for it: the export below is a live binding, so a file's top-level
// `t` is its own subtest for as long as its tests run, and its teardowns run when
// that subtest ends, before the next file starts.
import tap, { type Test } from 'tap'

let current: Test = tap
export { current as default }

/** From now on, the files imported get `t` as their `t`. */
export function runningAs (t: Test): void {
  current = t
}
