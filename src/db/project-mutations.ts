// The two mutations of a project. Each is one statement, so the token's check
// (db/caller.ts), the permission check, the row lock (an editor's only), If-Match
// on the locked row, the change of its one column, the audit activity and the
// aggregate of the project as it is afterwards (with its tag) commit and come back
// together, with no read-modify-write of the row and no second round trip.
import { sql, type Kysely } from 'kysely'
import { CALLER_PERSON, CALLER_TOKEN, prepareForCaller, runAs, type Actor, type WithCaller } from './caller.js'
import { ACCESS, accessLevel, hasAccess } from './access.js'
import { value, type ValueParameters } from './prepared.js'
import { changedProjectColumns, childrenHeld, projectAggregate, projectSource, subscriptionSources, type BuiltChildren, type ChildColumn, type ProjectText } from './project-aggregate.js'
import { fenced, projectTag } from './project-etag.js'
import { ifMatchPrecondition, noPrecondition, PRECONDITION_HOLDS } from './project-precondition.js'
import { jobsQueued, queueDeliveries } from './jobs.js'
import type { Database } from './types.js'

export type ProjectField = 'name' | 'description'

const ACTIONS = {
  name: { action: 'project_renamed', old: 'old_name', new: 'new_name', event: 'project.renamed' },
  description: { action: 'project_description_changed', old: 'old_description', new: 'new_description', event: 'project.description_changed' }
} as const

/** A webhook event carries a description up to this size; a longer one is flagged, without its text. */
export const WEBHOOK_DESCRIPTION_MAX_BYTES = 64 * 1024

// All CTEs of a statement share one snapshot, in which `projects` still holds the
// old row: the aggregate reads the project's own columns from this CTE instead.
const LATEST = projectSource('latest')

export type UpdateResult =
  | { outcome: 'done', project: ChangedProject } // changed with an activity recorded, or already so and untouched
  | { outcome: 'precondition_failed', etag: string, moved: boolean } // If-Match named none of `etag`; nothing written
  | { outcome: 'forbidden' } // visible to the person, not editable by them
  | { outcome: 'not_found' } // absent, archived, or invisible to the person

/** Who changes the project: the request's caller, or a person acted for without a token (with the token to record, if any). */
export type ChangeActor = { actor: Actor } | { personId: string, tokenId: string | null }

/**
 * A changed project as its statement returns it: the aggregate as text, whole, or
 * without its kept children's columns when the server said it holds them written
 * at their version (`childrenKept`).
 */
export interface ChangedProject extends ProjectText {
  etag: string
  /** The version of its kept children (db/project-aggregate.ts, childrenVersion); null when the statement built them. */
  childrenVersion: string | null
  childrenKept: boolean
}

export type UpdateProjectField = ChangeActor & {
  projectId: string
  field: ProjectField
  value: string
  /** A description's: the canonical ids of the people it mentions (routes/projects/mentions.ts). */
  mentions?: string[]
  /** If-Match's strong tags (db/project-precondition.ts); null or absent: unconditional. */
  ifMatch?: string[] | null
  /** Versions of the project's kept children whose text the server holds written: the answer leaves them out. */
  knownChildren?: readonly string[]
}

/**
 * The values a mutation's statement takes (the caller comes with the statement):
 * a conditional one's also If-Match's tags, the description's the people it mentions.
 */
const CHANGE = { value: value<string>(), projectId: value<string>(), knownChildren: value<string[]>() }
const CONDITION = { ifMatch: value<string[]>() }
const MENTIONS = { mentions: value<string[]>() }

type ChangeValues = ValueParameters<typeof CHANGE> & Partial<ValueParameters<typeof CONDITION>>

/**
 * The CTEs every change shares: the permission check, the locked row, the write
 * and its activity (which yields its id). The person is the statement's caller
 * (db/caller.ts): without one, `me` matches no one and nothing is locked or written.
 */
function projectChange (withCaller: WithCaller, db: Kysely<Database>, field: ProjectField, change: ChangeValues) {
  const names = ACTIONS[field]
  return withCaller
    // The value travels once, however many places use it (a description may be 512 KiB).
    .with('input', (qb) => qb.selectNoFrom(sql<string>`${change.value}::text`.as('value')))
    // Visibility and permission first, from the statement's snapshot, taking no lock:
    // a row held by another transaction must not keep (or time out) someone who may
    // not change it, nor tell them, by waiting, that the project exists.
    .with('access', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', CALLER_PERSON))
      .where('p.id', '=', change.projectId)
      .where('p.archived_at', 'is', null)
      .select((eb) => ['p.id', accessLevel(eb.table('p'), eb.table('me')).as('level')]))
    // Only an editor locks the row, so only an editor waits: for anyone else the id
    // looked up is NULL, which matches no row and locks nothing, whether PostgreSQL
    // materialises this CTE or not. The lock makes the old value in the activity the
    // one this update replaces, and READ COMMITTED hands back the latest committed
    // version of the row it waited for, rechecked (still not archived) and with the
    // level recomputed on it.
    .with('target', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', CALLER_PERSON))
      .where('p.id', '=', (eb) => eb.selectFrom('access').select('access.id').where('access.level', '>=', ACCESS.edit))
      .where('p.archived_at', 'is', null)
      .selectAll('p')
      .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
      .forUpdate('p'))
    // If-Match, on the locked row: nothing hangs on `changed` or `latest` when it fails.
    .with('precondition', () => change.ifMatch === undefined ? noPrecondition(db) : ifMatchPrecondition(db, CALLER_PERSON, change.ifMatch))
    .with('changed', (qb) => qb.updateTable('projects')
      .from(['target', 'input'])
      .set((eb) => field === 'name'
        ? { name: eb.ref('input.value'), updated_at: sql`now()` }
        : { description: eb.ref('input.value'), updated_at: sql`now()` })
      .whereRef('projects.id', '=', 'target.id')
      .where('target.level', '>=', ACCESS.edit)
      .where((eb) => eb(eb.ref(`target.${field}`), 'is distinct from', eb.ref('input.value')))
      .where(PRECONDITION_HOLDS)
      .returningAll('projects')
      .returning('target.level'))
    .with('activity', (qb) => qb.insertInto('activities')
      .columns(['company_id', 'project_id', 'author_id', 'token_id', 'action', 'content'])
      .expression((eb) => eb.selectFrom('changed')
        .innerJoin('target', 'target.id', 'changed.id')
        .select((eb) => [
          'changed.company_id',
          'changed.id',
          CALLER_PERSON.as('author_id'),
          CALLER_TOKEN.as('token_id'),
          sql.lit(names.action).as('action'),
          sql<string>`jsonb_build_object(${sql.lit(names.old)}, ${eb.ref(`target.${field}`)}, ${sql.lit(names.new)}, ${eb.ref(`changed.${field}`)})`.as('content')
        ]))
      .returning(['activities.id', 'activities.project_id', 'activities.author_id']))
    // The change's webhook event, one delivery per enabled endpoint of the company
    // that takes it, and each delivery's first job: they commit with the change or
    // not at all. The payload holds what the body is made of (src/presenters/webhook.ts).
    .with('deliveries', (qb) => qb.insertInto('webhook_deliveries')
      .columns(['webhook_id', 'event_id', 'event_type', 'payload', 'next_attempt_at'])
      .expression((eb) => eb.selectFrom('webhooks as w')
        .innerJoin('changed as p', 'p.company_id', 'w.company_id')
        .innerJoin('target as t', 't.id', 'p.id')
        .innerJoin('activity as a', (join) => join.onTrue())
        .innerJoin('companies as c', 'c.id', 'p.company_id')
        .innerJoin('people as actor', (join) => join.on('actor.id', '=', CALLER_PERSON))
        .where('w.enabled', '=', true)
        .where(sql<boolean>`${sql.lit(names.event)} = ANY(w.events)`)
        .select([
          'w.id as webhook_id',
          'a.id as event_id',
          sql.lit(names.event).as('event_type'),
          sql<Record<string, unknown>>`jsonb_build_object(
            'type', ${sql.lit(names.event)},
            'timestamp', now(),
            'data', jsonb_build_object(
              'project', jsonb_build_object('id', p.id, 'name', p.name),
              'company', jsonb_build_object('id', c.id, 'name', c.name),
              'actor', jsonb_build_object('id', actor.id, 'full_name', actor.full_name),
              'change', ${field === 'name'
                ? sql`jsonb_build_object('old_name', t.name, 'new_name', p.name)`
                : sql`jsonb_build_object(
                    'description', CASE WHEN octet_length(p.description) <= ${sql.lit(WEBHOOK_DESCRIPTION_MAX_BYTES)} THEN p.description END,
                    'description_omitted', octet_length(p.description) > ${sql.lit(WEBHOOK_DESCRIPTION_MAX_BYTES)},
                    'description_bytes', octet_length(p.description))`}))`.as('payload'),
          sql<Date>`now()`.as('next_attempt_at')
        ]))
      .returning(['webhook_deliveries.id as delivery_id', sql.lit(1).as('attempt'), sql<Date>`now()`.as('start_after')]))
    .with('delivery_jobs', (qb) => queueDeliveries(qb, 'deliveries'))
    // The row as it is after this statement: the one just written, else the locked
    // one; empty when the person may not edit or If-Match failed, so no aggregate is
    // built for them.
    .with('latest', (qb) => qb.selectFrom('changed').selectAll()
      .unionAll((eb) => eb.selectFrom('target').selectAll()
        .where('target.level', '>=', ACCESS.edit)
        .where(PRECONDITION_HOLDS)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('changed').select(sql.lit(1).as('one')))))))
}

/**
 * A conditional change has built the aggregate of the row before it, for its tag
 * (db/project-precondition.ts): the answer, the row after the change, takes its
 * child columns from there, but those the change may have altered (`except`).
 * The change writes only the project's own columns, the activity and, for a
 * description, subscriptions and other people's notifications.
 */
function builtBefore (values: ChangeValues, except: readonly ChildColumn[] = []): BuiltChildren | undefined {
  return values.ifMatch === undefined ? undefined : { row: 'precondition', except }
}

/** How many delivery jobs the statement queued: this process's workers are told (jobs.ts). */
const QUEUED = sql<number>`(SELECT count(*)::int FROM deliveries)`.as('queued')

// The answer: one row whenever the caller is valid (db/caller.ts).
const rename = (withCaller: WithCaller, db: Kysely<Database>, values: ChangeValues) => projectChange(withCaller, db, 'name', values)
  .selectFrom('caller')
  .leftJoin('access', (join) => join.onTrue())
  .leftJoin('target', (join) => join.onTrue())
  .leftJoin('precondition', (join) => join.onTrue())
  .leftJoin(fenced(projectAggregate(db, LATEST, CALLER_PERSON, { built: builtBefore(values) })).as('project'), (join) => join.onTrue())
  .leftJoinLateral(childrenHeld('project', values.knownChildren).as('held'), (join) => join.onTrue())
  .select(changedProjectColumns('project', 'held'))
  .select(['access.level', 'target.level as locked_level', 'precondition.holds', 'precondition.tag as current_tag', 'precondition.moved'])
  .select((eb) => projectTag('project', eb.ref('target.level')).as('etag'))
  .select(QUEUED)

const RENAME = {
  unconditional: prepareForCaller('write', CHANGE, (withCaller, values, db) => rename(withCaller, db, values)),
  conditional: prepareForCaller('write', { ...CHANGE, ...CONDITION }, (withCaller, values, db) => rename(withCaller, db, values))
}

/**
 * A description change reaches people, in the same statement (Operately's rules):
 * every person of the project's company the new document mentions (not suspended)
 * who has no subscription on the project's list gets a `mentioned` one (the list is
 * made when the project has none); then each subscriber is notified of the change's
 * activity, unless their subscription is canceled, or `mentioned` and the document
 * no longer mentions them. With the list's `send_to_everyone`, everyone of the
 * company is a subscriber but those who canceled. Never the author, a suspended
 * person or one who cannot view the project. Nothing of this happens when nothing
 * changed. Set-based throughout: the cost does not grow a statement per person.
 */
// What a description change reads of subscriptions: its snapshot's and what it wrote.
const WRITTEN_SUBSCRIPTIONS = subscriptionSources('all_lists', 'all_subscriptions', 'new_list', 'new_subscriptions')

const describe = (withCaller: WithCaller, db: Kysely<Database>, values: ChangeValues & ValueParameters<typeof MENTIONS>) => projectChange(withCaller, db, 'description', values)
  // The people mentioned who may be subscribed: of the project's company, not suspended.
  .with('mentioned', (qb) => qb.selectFrom('people as pe')
    .innerJoin('changed', 'changed.company_id', 'pe.company_id')
    .where(sql<boolean>`pe.id = ANY(${values.mentions}::uuid[])`)
    .where('pe.suspended_at', 'is', null)
    .select('pe.id'))
  .with('list', (qb) => qb.selectFrom('subscription_lists as sl')
    .innerJoin('target', 'target.id', 'sl.project_id')
    .select(['sl.id', 'sl.project_id', 'sl.send_to_everyone', 'sl.inserted_at']))
  // A list for a project that has none, when someone is to be subscribed to it. A
  // list another transaction made since this statement's snapshot is taken as it is.
  .with('new_list', (qb) => qb.insertInto('subscription_lists')
    .columns(['project_id'])
    .expression((eb) => eb.selectFrom('changed').select('changed.id')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('list').select(sql.lit(1).as('one')))))
      .where((eb) => eb.exists(eb.selectFrom('mentioned').select(sql.lit(1).as('one')))))
    .onConflict((oc) => oc.column('project_id').doUpdateSet((eb) => ({ project_id: eb.ref('excluded.project_id') })))
    .returning(['subscription_lists.id', 'subscription_lists.project_id', 'subscription_lists.send_to_everyone', 'subscription_lists.inserted_at']))
  .with('the_list', (qb) => qb.selectFrom('list').select(['list.id', 'list.send_to_everyone'])
    .unionAll((eb) => eb.selectFrom('new_list').select(['new_list.id', 'new_list.send_to_everyone'])))
  .with('new_subscriptions', (qb) => qb.insertInto('subscriptions')
    .columns(['subscription_list_id', 'person_id', 'type'])
    .expression((eb) => eb.selectFrom('mentioned as m')
      .innerJoin('the_list as l', (join) => join.onTrue())
      // The list's subscribers read once, as a hashed set (the list is one at most,
      // and person_id never null): as NOT EXISTS, the plan read the whole list again
      // for each person mentioned, matching the person after the index.
      .where('m.id', 'not in', (eb) => eb.selectFrom('subscriptions as s')
        .where('s.subscription_list_id', 'in', eb.selectFrom('the_list').select('the_list.id'))
        .select('s.person_id'))
      .select(['l.id', 'm.id as person_id', sql.lit('mentioned').as('type')]))
    // One made meanwhile by another transaction (a change committed while this one
    // waited for the row, after this statement's snapshot) stays as it is, but comes
    // back, as it now is: the snapshot does not show it, and its person is mentioned.
    .onConflict((oc) => oc.columns(['subscription_list_id', 'person_id']).doUpdateSet((eb) => ({ type: eb.ref('subscriptions.type') })))
    .returningAll())
  // Everyone who may be told: the subscribers, the newly subscribed, and with
  // send_to_everyone the whole company but those who canceled.
  .with('candidates', (qb) => qb.selectFrom('subscriptions as s')
    .innerJoin('the_list as l', 'l.id', 's.subscription_list_id')
    .where('s.canceled', '=', false)
    .where((eb) => eb.or([
      eb('s.type', '<>', 'mentioned'),
      eb('s.person_id', 'in', eb.selectFrom('mentioned').select('mentioned.id'))
    ]))
    .select('s.person_id')
    .union((eb) => eb.selectFrom('new_subscriptions').where('new_subscriptions.canceled', '=', false).select('new_subscriptions.person_id'))
    .union((eb) => eb.selectFrom('people as pe')
      .innerJoin('changed', 'changed.company_id', 'pe.company_id')
      .innerJoin('the_list as l', (join) => join.onTrue())
      .where('l.send_to_everyone', '=', true)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('subscriptions as s')
        .select(sql.lit(1).as('one'))
        .whereRef('s.subscription_list_id', '=', 'l.id')
        .whereRef('s.person_id', '=', 'pe.id')
        .where('s.canceled', '=', true))))
      .select('pe.id as person_id')))
  // Each notification's id is time-ordered (migrations/20261130000000_time_ordered_ids.ts)
  // and its random bits are those of its activity's and its person's ids hashed: one
  // notification per person per activity, and the activity's id is random and never
  // shown outside the database. A draw from the strong random source for each row
  // (gen_random_uuid(), 3 to 5 µs here, on PostgreSQL as on the embedded database)
  // cost a change with a hundred subscribers about 6 % of its statement.
  .with('notified', (qb) => qb.insertInto('notifications')
    .columns(['id', 'person_id', 'project_id', 'activity_id', 'author_id', 'action'])
    // Each candidate looked up and judged on their own (fenced, so not joined as a
    // set): as one join, the generic plan read every person and every space
    // membership of the database to notify a project's few subscribers.
    .expression((eb) => eb.selectFrom('candidates as r')
      .innerJoin('changed as p', (join) => join.onTrue())
      .innerJoin('activity as a', (join) => join.onTrue())
      .innerJoinLateral((eb) => fenced(eb.selectFrom('people as pe')
        .whereRef('pe.id', '=', 'r.person_id')
        .where('pe.id', '<>', CALLER_PERSON)
        .where('pe.suspended_at', 'is', null)
        .where((eb) => hasAccess(eb.table('p'), eb.table('pe'), ACCESS.view))
        .select('pe.id')).as('pe'), (join) => join.onTrue())
      .select((eb) => [
        sql<string>`time_ordered_uuid(sha256(uuid_send(${eb.ref('a.id')}) || uuid_send(${eb.ref('pe.id')})))`.as('id'),
        'pe.id as person_id', 'a.project_id', 'a.id as activity_id', 'a.author_id', sql.lit(ACTIONS.description.action).as('action')
      ]))
    .returning('notifications.id'))
  // What the aggregate reads of subscriptions: its snapshot's and this statement's own.
  .with('all_lists', (qb) => qb.selectFrom('list').selectAll()
    .unionAll((eb) => eb.selectFrom('new_list').selectAll()))
  .with('all_subscriptions', (qb) => qb.selectFrom('subscriptions as s')
    .innerJoin('list', 'list.id', 's.subscription_list_id')
    .selectAll('s')
    .unionAll((eb) => eb.selectFrom('new_subscriptions').selectAll()))
  .selectFrom('caller')
  .leftJoin('access', (join) => join.onTrue())
  .leftJoin('target', (join) => join.onTrue())
  .leftJoin('precondition', (join) => join.onTrue())
  .leftJoin(fenced(projectAggregate(db, LATEST, CALLER_PERSON, {
    written: WRITTEN_SUBSCRIPTIONS,
    built: builtBefore(values, ['contributors', 'subscription_list'])
  })).as('project'), (join) => join.onTrue())
  // Children built here from what the statement wrote have no version.
  .leftJoinLateral(childrenHeld('project', values.knownChildren, WRITTEN_SUBSCRIPTIONS.changed).as('held'), (join) => join.onTrue())
  .select(changedProjectColumns('project', 'held'))
  .select(['access.level', 'target.level as locked_level', 'precondition.holds', 'precondition.tag as current_tag', 'precondition.moved'])
  .select((eb) => projectTag('project', eb.ref('target.level')).as('etag'))
  .select(QUEUED)

const DESCRIBE = {
  unconditional: prepareForCaller('write', { ...CHANGE, ...MENTIONS }, (withCaller, values, db) => describe(withCaller, db, values)),
  conditional: prepareForCaller('write', { ...CHANGE, ...CONDITION, ...MENTIONS }, (withCaller, values, db) => describe(withCaller, db, values))
}

export async function updateProjectField (db: Kysely<Database>, change: UpdateProjectField): Promise<UpdateResult> {
  const actor = 'actor' in change ? change.actor : { personId: change.personId, tokenId: change.tokenId }
  const values = { value: change.value, projectId: change.projectId, knownChildren: [...change.knownChildren ?? []] }
  const ifMatch = change.ifMatch ?? null
  const mentions = change.mentions ?? []
  const [row] = change.field === 'name'
    ? ifMatch === null
      ? await runAs(db, RENAME.unconditional, actor, values)
      : await runAs(db, RENAME.conditional, actor, { ...values, ifMatch })
    : ifMatch === null
      ? await runAs(db, DESCRIBE.unconditional, actor, { ...values, mentions })
      : await runAs(db, DESCRIBE.conditional, actor, { ...values, ifMatch, mentions })

  // Decided without waiting for the row: who may not edit never waits for it.
  if (!row || row.level === null || row.level < ACCESS.view) return { outcome: 'not_found' }
  if (row.level < ACCESS.edit) return { outcome: 'forbidden' }
  // An editor waited for the row: the version the other transaction committed
  // decides. Gone or archived meanwhile: not found; no longer editable: forbidden.
  const { locked_level: level, holds, current_tag: currentTag, moved, aggregate, etag, children_version: childrenVersion, children_kept: childrenKept } = row
  if (level === null || level < ACCESS.view) return { outcome: 'not_found' }
  if (level < ACCESS.edit) return { outcome: 'forbidden' }
  if (holds !== true) {
    if (currentTag === null) throw new Error('If-Match failed on an editable project without its tag')
    return { outcome: 'precondition_failed', etag: currentTag, moved: moved === true }
  }
  // `latest` has the row exactly when the locked row is editable, so the join found it.
  if (aggregate === null || etag === null) throw new Error('the project was editable but its row did not come back')
  jobsQueued(row.queued ?? 0)
  return { outcome: 'done', project: { aggregate, level, etag, childrenVersion, childrenKept: childrenKept === true } }
}
