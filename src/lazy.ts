// Something costly to load (a module of several megabytes, an app built on it),
// loaded by its first use and shared by every later one, concurrent ones included.
// A load that fails is forgotten once it has failed: the next use tries again,
// rather than every use failing until the process restarts.

export interface Lazy<T> {
  /** The loaded value: loading it on the first call, and again after a load that failed. */
  get: () => Promise<T>
  /** The load under way or done, if one was started and has not failed. */
  started: () => Promise<T> | undefined
}

export function lazily<T> (load: () => Promise<T>): Lazy<T> {
  let loading: Promise<T> | undefined
  return {
    get: () => {
      if (loading === undefined) {
        const attempt = load()
        loading = attempt
        attempt.catch(() => { if (loading === attempt) loading = undefined })
      }
      return loading
    },
    started: () => loading
  }
}
