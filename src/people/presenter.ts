// A person as the API shows them, wherever they appear.
import { shortId } from '../ids.js'
import type { PersonJson } from '../db/types.js'
import type { Person } from '../projects/schemas.js'

export function toPerson (p: PersonJson): Person {
  return { id: shortId(p.id), full_name: p.full_name, email: p.email, title: p.title, avatar_url: p.avatar_url, type: p.type }
}
