// The embedded database's thread names itself, so that `top -H`, `ps -L` and the
// bench's per-thread CPU (bench/load.ts) tell it from the thread serving HTTP and
// from V8's helpers: every thread of a Node process is otherwise called `node`.
import { writeFileSync } from 'node:fs'

/** The embedded database's thread (src/db/embedded/thread.ts), as Linux shows it: at most 15 characters. */
export const EMBEDDED_THREAD_NAME = 'embedded-db'

/** Names the calling thread (Linux); false where the system has no such name or refuses it. */
export function nameThisThread (name: string): boolean {
  try {
    writeFileSync('/proc/thread-self/comm', name)
    return true
  } catch {
    return false
  }
}
