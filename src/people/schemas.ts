// people/get_me: the token's person.
import Type from 'typebox'
import { PersonSchema } from '../projects/schemas.js'
import { Shared } from '../schemas/common.js'

export const GetMeQuerySchema = Type.Object({
  include_manager: Type.Optional(Type.Enum(['true', 'false'], { description: 'Accepted for compatibility; people have no manager here' }))
}, { additionalProperties: false })

export const MeResponseSchema = Type.Object({ me: Shared(PersonSchema) }, {
  additionalProperties: false,
  description: "The token's person",
  examples: [{ me: { id: '1S9sHJdXziGMetRhKlyYI1', full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', avatar_url: null, type: 'human' } }]
})
