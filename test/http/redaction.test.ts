// Tokens never reach the logs or an echo, wherever a client puts one and however
// it is encoded: never adopted as the request id, masked in logged URLs (percent-
// encoded too) and User-Agents, and in answers that repeat a path or a field name.
// A database URL's password is never printed.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import t from '../tap.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { hasToken, redactPasswords, redactTokens } from '../../src/redact.js'
import { build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

const secret = randomBytes(32).toString('base64url')
const token = `pat_${secret}`
const percentEncoded = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`).join('')

t.test('redactTokens masks a token however it is written, and leaves ids alone', async (t) => {
  const cases: Array<[string, string]> = [
    [`/x?access_token=${token}`, '/x?access_token=pat_[redacted]'],
    [`/x?t=${token.toUpperCase()}`, '/x?t=pat_[redacted]'],
    [`/x?t=pat%5F${secret}`, '/x?t=pat_[redacted]'],
    [`/x?t=${percentEncoded(token)}`, '/x?t=pat_[redacted]'],
    [`/x?t=%2570at_${secret}`, '/x?t=pat_[redacted]'], // encoded twice
    [`/x?t=${secret}`, '/x?t=pat_[redacted]'], // the secret alone
    [`Mozilla/5.0 (${token})`, 'Mozilla/5.0 (pat_[redacted])'],
    [`a=${token}&b=${percentEncoded(token)}`, 'a=pat_[redacted]&b=pat_[redacted]']
  ]
  for (const [text, masked] of cases) {
    t.equal(redactTokens(text), masked, text.slice(0, 40))
    t.ok(hasToken(text))
  }
  const plain = [
    '/api/external/v1/projects/get?id=website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh',
    'e4fceb7f-ca74-4052-b6f6-6a3425fe56bc',
    '/api/external/v1/projects/get?id=%20abc%2F',
    '100%'
  ]
  for (const text of plain) {
    t.equal(redactTokens(text), text, text)
    t.notOk(hasToken(text))
  }
})

t.test('redactPasswords takes the password out of a URL wherever it stands', async (t) => {
  t.equal(redactPasswords('postgres://app:s3cret@db:5432/x'), 'postgres://app:[redacted]@db:5432/x')
  t.equal(redactPasswords('"mysql://u:p%40ss@h/db": must match'), '"mysql://u:[redacted]@h/db": must match')
  t.equal(redactPasswords('postgres://app@db/x'), 'postgres://app@db/x')
  t.equal(redactPasswords('redis://:only-password@cache:6379'), 'redis://:[redacted]@cache:6379')
})

t.test('a token put anywhere in a request reaches neither the logs nor the answer', async (t) => {
  const { db } = await build(t)
  const company = await createCompany(db)
  const person = await createPerson(db, company.id)
  const space = await createSpace(db, company.id)
  const project = await createProject(db, space, { access: { company: 70 } })
  const issued = await tokenFor(db, person.email)
  const own = issued.token.slice('pat_'.length)

  const lines: string[] = []
  const { app: logged } = await build(t, { db, env: { LOG_LEVEL: 'trace' }, logStream: { write: (line: string) => { lines.push(line) } } })

  const auth = { authorization: `Bearer ${issued.token}` }
  const get = `/api/external/v1/projects/get?id=${project.publicId}`
  const answers = [
    // Token-shaped request ids are replaced, never adopted.
    await logged.inject({ method: 'GET', url: get, headers: { ...auth, 'x-request-id': issued.token } }),
    await logged.inject({ method: 'GET', url: get, headers: { ...auth, 'x-request-id': own } }),
    await logged.inject({ method: 'GET', url: get, headers: { ...auth, 'x-request-id': `req-${issued.token.toUpperCase()}` } }),
    // In the User-Agent.
    await logged.inject({ method: 'GET', url: get, headers: { ...auth, 'user-agent': `curl/8.0 token=${issued.token}` } }),
    // Percent-encoded in the query string, as a value and as a key.
    await logged.inject({ method: 'GET', url: `${get}&access_token=pat%5F${own}` }),
    await logged.inject({ method: 'GET', url: `${get}&${percentEncoded(issued.token)}=1`, headers: auth }),
    // In an unknown path, which the 404 repeats.
    await logged.inject({ method: 'GET', url: `/api/external/v1/${percentEncoded(issued.token)}` }),
    await logged.inject({ method: 'GET', url: `/api/external/v1/${issued.token}` }),
    // As a repeated key, which the 400 names.
    await logged.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers: { ...auth, 'content-type': 'application/json' }, payload: `{"project_id":"${project.publicId}","name":"x","${issued.token}":1,"${issued.token}":2}` })
  ]
  t.same(answers.map((a) => a.statusCode), [200, 200, 200, 200, 401, 400, 404, 404, 400])
  for (const answer of answers.slice(0, 3)) {
    t.match(answer.headers['x-request-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a token-shaped request id is replaced by a UUID')
  }
  t.same(answers[6]!.json(), { statusCode: 404, error: 'Not Found', code: 'route_not_found', message: 'no route GET /api/external/v1/pat_[redacted]' })
  t.same(answers[7]!.json(), answers[6]!.json())
  t.same(answers[8]!.json().details, [{ path: '/pat_[redacted]', message: 'must appear only once in its object' }])

  t.ok(lines.length >= answers.length * 2, `the requests were logged (${lines.length} lines)`)
  for (const answer of answers) {
    const echoed = JSON.stringify(answer.headers) + answer.body
    t.notOk(echoed.includes(own) || echoed.toLowerCase().includes(own.toLowerCase()), 'no token in the answer')
  }
  const leaked = lines.filter((line) => line.toLowerCase().includes(own.toLowerCase()) || line.includes(percentEncoded(own).slice(0, 30)))
  t.same(leaked, [], 'no token in any log line')
  const incoming = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'incoming request')
  t.equal(incoming[3].req.userAgent, 'curl/8.0 token=pat_[redacted]')
  t.match(incoming[4].req.url, /access_token=pat_\[redacted\]$/)
})

t.test('a bad DATABASE_URL is reported without its password', async (t) => {
  const password = `pw${randomBytes(6).toString('hex')}`
  // Refused by the configuration.
  let message = ''
  try {
    loadConfig({ DATABASE_URL: `mysql://app:${password}@db.example/projects` })
  } catch (error) {
    t.ok(error instanceof ConfigError)
    message = (error as Error).message
  }
  t.match(message, /DATABASE_URL="mysql:\/\/app:\[redacted\]@db\.example\/projects": must be a postgres:\/\/ or postgresql:\/\/ URL$/m)
  t.notOk(message.includes(password))

  // Accepted, but nothing answers there: the server names the cause, not the password.
  const child = spawn(process.execPath, ['--import=tsx', 'src/server.ts'], {
    env: { ...process.env, DATABASE_URL: `postgres://app:${password}@127.0.0.1:1/projects`, DB_CONNECTION_TIMEOUT_MS: '2000', LOG_LEVEL: 'silent', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const code = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(code, 1)
  t.match(output, /failed to start: no connection to the database could be obtained: connect ECONNREFUSED 127\.0\.0\.1:1/)
  t.notOk(output.includes(password), 'the password is not printed')
})
