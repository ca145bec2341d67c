// A person's access level on a project, as SQL over a project aliased `p` and a
// person aliased `me`. The highest of: company admin (100), the public level, the
// company level for members of the project's company, the space level for members
// of its space, and the person's own contributor binding. Suspended people have none.
import { sql, type RawBuilder } from 'kysely'

export const ACCESS = { view: 10, comment: 40, edit: 70, full: 100 } as const

export const accessLevel: RawBuilder<number> = sql<number>`CASE WHEN me.suspended_at IS NOT NULL THEN 0 ELSE greatest(
  p.public_access,
  CASE WHEN me.company_id = p.company_id THEN p.company_access ELSE 0 END,
  CASE WHEN me.company_id = p.company_id AND me.is_admin THEN 100 ELSE 0 END,
  CASE WHEN EXISTS (
    SELECT 1 FROM space_members sm WHERE sm.space_id = p.space_id AND sm.person_id = me.id
  ) THEN p.space_access ELSE 0 END,
  (SELECT coalesce(max(CASE WHEN c.role = 'contributor' THEN coalesce(c.access_level, 0) ELSE 100 END), 0)
     FROM project_contributors c WHERE c.project_id = p.id AND c.person_id = me.id)
) END`
