// Calls made the way Operately's command-line client (its cli/ package) makes them:
// `new URL(base + path)`, each input appended with `searchParams.append`
// (String(value); undefined skipped) for a query, a JSON body for a mutation, and
// axios's default headers with the Bearer token.

export interface CliAnswer {
  status: number
  // The answer as the CLI prints it: any JSON.
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers
}

export type CliCall = (token: string, kind: 'query' | 'mutation', name: string, inputs?: Record<string, unknown>) => Promise<CliAnswer>

/** The CLI's calls to the server at `baseUrl`. */
export function operatelyCli (baseUrl: string): CliCall {
  return async (token, kind, name, inputs = {}) => {
    const url = new URL(`${baseUrl.replace(/\/$/, '')}/api/external/v1/${name}`)
    const headers: Record<string, string> = {
      Accept: 'application/json, text/plain, */*',
      Authorization: `Bearer ${token}`,
      'User-Agent': 'axios/1.7.9',
      'Accept-Encoding': 'gzip, compress, deflate, br'
    }
    let body: string | undefined
    if (kind === 'query') {
      for (const [key, value] of Object.entries(inputs)) if (value !== undefined) url.searchParams.append(key, String(value))
    } else {
      headers['Content-Type'] = 'application/json'
      body = JSON.stringify(inputs)
    }
    const res = await fetch(url, { method: kind === 'query' ? 'GET' : 'POST', headers, body })
    const text = await res.text()
    return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers }
  }
}
