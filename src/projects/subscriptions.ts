// Who hears of a project's change (Operately's rules): the people a document
// mentions are subscribed to the project's list, and each subscriber is notified
// of the change's activity, unless their subscription is canceled, or `mentioned`
// and the document no longer mentions them. With the list's send_to_everyone the
// whole company subscribes but those who canceled. Never the author, a suspended
// person or one who cannot view the project. Set-based: no statement per person.
import { sql, type Transaction } from 'kysely'
import type { Database } from '../db/types.js'
import { statement } from '../db/statements.js'
import { ACCESS, hasAccess } from './access.js'

/**
 * The people of the project's company among `mentions` (not suspended), each
 * given a `mentioned` subscription unless they have one; the list is made when
 * the project has none. Their ids.
 */
export async function subscribeMentioned (trx: Transaction<Database>, project: { id: string, company_id: string }, mentions: string[]): Promise<string[]> {
  if (mentions.length === 0) return []
  const people = await trx.selectFrom('people')
    .where('company_id', '=', project.company_id)
    .where('id', 'in', mentions)
    .where('suspended_at', 'is', null)
    .select('id')
    .execute()
  if (people.length === 0) return []
  const list = await trx.insertInto('subscription_lists')
    .values({ project_id: project.id })
    .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ project_id: eb.ref('excluded.project_id') })))
    .returning('id')
    .executeTakeFirstOrThrow()
  await trx.insertInto('subscriptions')
    .values(people.map((person) => ({ subscription_list_id: list.id, person_id: person.id, type: 'mentioned' as const })))
    .onConflict((oc) => oc.columns(['subscription_list_id', 'person_id']).doNothing())
    .execute()
  return people.map((person) => person.id)
}

const notifyList = statement(['activityId', 'projectId', 'authorId', 'action', 'mentioned'],
  (db, a: { activityId: string, projectId: string, authorId: string, action: string, mentioned: readonly string[] }) => db
    .with('list', (qb) => qb.selectFrom('subscription_lists').where('project_id', '=', a.projectId).select(['id', 'send_to_everyone']))
    .with('candidates', (qb) => qb.selectFrom('subscriptions as s')
      .innerJoin('list', 'list.id', 's.subscription_list_id')
      .where('s.canceled', '=', false)
      .where((eb) => eb.or([eb('s.type', '<>', 'mentioned'), sql<boolean>`s.person_id = any(${a.mentioned}::uuid[])`]))
      .select('s.person_id')
      .union((eb) => eb.selectFrom('people as pe')
        .innerJoin('projects as p', 'p.company_id', 'pe.company_id')
        .innerJoin('list', (join) => join.onTrue())
        .where('p.id', '=', a.projectId)
        .where('list.send_to_everyone', '=', true)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('subscriptions as s')
          .select(sql.lit(1).as('one'))
          .whereRef('s.subscription_list_id', '=', 'list.id')
          .whereRef('s.person_id', '=', 'pe.id')
          .where('s.canceled', '=', true))))
        .select('pe.id as person_id')))
    .insertInto('notifications')
    .columns(['id', 'person_id', 'project_id', 'activity_id', 'author_id', 'action'])
    .expression((eb) => eb.selectFrom('candidates as r')
      .innerJoin('people as pe', 'pe.id', 'r.person_id')
      .innerJoin('projects as p', (join) => join.on('p.id', '=', a.projectId))
      .where('pe.id', '<>', a.authorId)
      .where('pe.suspended_at', 'is', null)
      .where((eb) => hasAccess(eb.table('p'), eb.table('pe'), ACCESS.view))
      .select([
        // Time-ordered, with the activity's and the person's ids for random bits:
        // one notification per person per activity.
        sql<string>`time_ordered_uuid(sha256(uuid_send(${a.activityId}::uuid) || uuid_send(pe.id)))`.as('id'),
        'pe.id as person_id',
        sql<string>`${a.projectId}::uuid`.as('project_id'),
        sql<string>`${a.activityId}::uuid`.as('activity_id'),
        sql<string>`${a.authorId}::uuid`.as('author_id'),
        sql<string>`${a.action}`.as('action')
      ])))

/** Notifies the project's subscribers of an activity (`mentioned`: who the new document mentions). */
export async function notifySubscribers (trx: Transaction<Database>, activity: { id: string, projectId: string, authorId: string, action: string }, mentioned: string[]): Promise<void> {
  await notifyList(trx, { activityId: activity.id, projectId: activity.projectId, authorId: activity.authorId, action: activity.action, mentioned })
}

/**
 * Subscribes `personId` to the project's list as `invited` (the list is made when
 * the project has none); a canceled subscription of theirs is taken up again, as
 * Operately does for a new champion, reviewer or contributor.
 */
export async function subscribeInvited (trx: Transaction<Database>, projectId: string, personId: string): Promise<void> {
  const list = await trx.insertInto('subscription_lists')
    .values({ project_id: projectId })
    .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ project_id: eb.ref('excluded.project_id') })))
    .returning('id')
    .executeTakeFirstOrThrow()
  await trx.insertInto('subscriptions')
    .values({ subscription_list_id: list.id, person_id: personId, type: 'invited' })
    .onConflict((oc) => oc.columns(['subscription_list_id', 'person_id']).doUpdateSet({ canceled: false }).where('subscriptions.canceled', '=', true))
    .execute()
}

/**
 * Notifies the people `personIds` names of an activity, each once: those who can
 * view the project, never the author or a suspended person (Operately's rule for
 * the people chosen when a project is paused, resumed or closed, or added to it).
 */
export async function notifyPeople (trx: Transaction<Database>, activity: { id: string, projectId: string, authorId: string, action: string }, personIds: string[]): Promise<void> {
  const wanted = [...new Set(personIds)].filter((id) => id !== activity.authorId)
  if (wanted.length === 0) return
  await trx.insertInto('notifications')
    .columns(['id', 'person_id', 'project_id', 'activity_id', 'author_id', 'action'])
    .expression((eb) => eb.selectFrom('people as pe')
      .innerJoin('projects as p', (join) => join.on('p.id', '=', activity.projectId))
      .where('pe.id', 'in', wanted)
      .where('pe.suspended_at', 'is', null)
      .where((eb) => hasAccess(eb.table('p'), eb.table('pe'), ACCESS.view))
      .select([
        sql<string>`time_ordered_uuid(sha256(uuid_send(${activity.id}::uuid) || uuid_send(pe.id)))`.as('id'),
        'pe.id as person_id',
        sql<string>`${activity.projectId}::uuid`.as('project_id'),
        sql<string>`${activity.id}::uuid`.as('activity_id'),
        sql<string>`${activity.authorId}::uuid`.as('author_id'),
        sql<string>`${activity.action}`.as('action')
      ]))
    .execute()
}
