// The worker thread that owns the embedded database. PGlite runs every statement
// synchronously in WebAssembly on the thread that calls it: here, so that the
// thread serving HTTP goes on parsing, routing and answering meanwhile. This file
// is only the thread's entry: it opens PGlite and hands what the other thread
// sends to the statement queue (queue.ts), which also runs the upkeep (upkeep.ts).
import { parentPort, workerData } from 'node:worker_threads'
import type { PGlite } from '@electric-sql/pglite'
import { openPGlite } from './pglite.js'
import { describe, type FromThread, type ThreadOptions, type ToThread } from './protocol.js'
import { StatementQueue } from './queue.js'
import { EMBEDDED_THREAD_NAME, nameThisThread } from './thread-name.js'

if (parentPort === null) throw new Error('thread.ts runs as a worker thread (database.ts starts it)')
const port = parentPort
const options = workerData as ThreadOptions
nameThisThread(EMBEDDED_THREAD_NAME)

function send (message: FromThread): void {
  try {
    port.postMessage(message)
  } catch (error) {
    // A value that cannot cross threads: the caller gets an error, not silence.
    port.postMessage({ id: 'id' in message ? message.id : 0, ok: false, error: describe(error), inTransaction: false })
  }
}

async function open (): Promise<PGlite | null> {
  try {
    return await openPGlite(options)
  } catch (error) {
    // The opener says why and ends this thread.
    send({ started: false, error: describe(error) })
    return null
  }
}

const pglite = await open()
if (pglite === null) {
  port.close()
} else {
  const queue = await StatementQueue.start(pglite, send, options)
  port.on('message', (request: ToThread) => { queue.receive(request) })
  send({ started: true })
}
