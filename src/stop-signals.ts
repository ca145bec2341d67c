// The graceful stop of a process (the server, the webhook worker): close-with-grace
// for crashes, other signals and the deadline, and SIGTERM and SIGINT taken here,
// because one stop may arrive more than once. A process manager signals the whole
// process group of `npm start`, and whatever relays signals in that group delivers
// it again a few milliseconds later: npm forwards each it gets to its child (this
// process, under a shell that execs its one command), tsx's and Node.js's watchers
// forward to theirs, and a terminal's Ctrl-C reaches the whole group too.
// close-with-grace took any second signal for an order to exit at once, and so cut
// the graceful stop short with exit code 1.
import closeWithGrace from 'close-with-grace'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const
type StopSignal = typeof STOP_SIGNALS[number]

interface Logger {
  info: (obj: object, msg: string) => void
  error: (msg: string) => void
}

/** Why the process is stopping: a signal, or an error nothing else caught. */
export interface StopReason { signal?: StopSignal, err?: Error }

/**
 * Runs `stop` once, on the first SIGTERM or SIGINT (or an uncaught error, or
 * another signal close-with-grace handles), then exits: 0 when it resolves, 1 when
 * it fails, throws or outlasts `delay` ms, or when the stop was for an error.
 * SIGTERM and SIGINT while stopping change nothing: the deadline bounds the stop,
 * and what must end it sooner sends SIGQUIT (Ctrl-\), which exits 1 at once, or
 * SIGKILL, as process managers do past their grace period.
 */
export function onStop (options: { delay: number, logger: Logger }, stop: (reason: StopReason) => Promise<void>): void {
  const { logger } = options
  let signaled: StopSignal | undefined
  let stopping = false
  const grace = closeWithGrace({ delay: options.delay, logger, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    stopping = true
    await stop(signaled === undefined ? { err } : { signal: signaled })
  })
  const onSignal = (signal: StopSignal) => {
    if (stopping) {
      logger.info({ signal }, 'stop signal while stopping: the graceful stop goes on')
      return
    }
    signaled = signal
    stopping = true
    grace.close()
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
}
