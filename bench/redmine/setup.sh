#!/bin/bash
# Installs a Redmine to rename projects on beside this server (bench/redmine.ts), on
# Debian 12 from Debian's packages: Redmine 5.0 with its database `redmine` on the
# PostgreSQL server at 127.0.0.1:5432 (reached as `postgres` with trust auth, as the
# bench's own), served by puma in cluster mode (2 workers, 5 threads each, the
# production environment, logging at warn) on 127.0.0.1:3000, its REST API enabled,
# with 1,000 public projects (bench-0001 .. bench-1000). Run as root; safe to run
# again. It prints the two settings `npm run bench` then needs.
#
#   REDMINE_BENCH_DIR   where it keeps its start and stop scripts and the API key (default /var/lib/redmine-bench)
#   REDMINE_PORT        puma's port (default 3000)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
DIR=${REDMINE_BENCH_DIR:-/var/lib/redmine-bench}
PORT=${REDMINE_PORT:-3000}
PSQL=(psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -tA)
mkdir -p "$DIR"

# The package's own database setup (dbconfig-common) is skipped: the database is made below.
debconf-set-selections <<'PRESEED'
redmine redmine/current-instances string default
redmine redmine/instances/default/dbconfig-install boolean false
redmine redmine/instances/default/database-type select pgsql
redmine redmine/instances/default/default-language select en
PRESEED
apt-get update -q
# Without recommends: no passenger and apache.
apt-get install -y -q --no-install-recommends redmine redmine-pgsql puma curl

"${PSQL[@]}" -c "select 1 from pg_roles where rolname = 'redmine'" | grep -q 1 ||
  "${PSQL[@]}" -c "CREATE ROLE redmine LOGIN PASSWORD 'redmine'"
"${PSQL[@]}" -c "select 1 from pg_database where datname = 'redmine'" | grep -q 1 ||
  "${PSQL[@]}" -c "CREATE DATABASE redmine OWNER redmine ENCODING 'UTF8' TEMPLATE template0"
cat > /etc/redmine/default/database.yml <<'YML'
production:
  adapter: postgresql
  database: redmine
  host: 127.0.0.1
  port: 5432
  username: redmine
  password: redmine
  encoding: utf8
  pool: 5
YML
chown root:www-data /etc/redmine/default/database.yml
chmod 640 /etc/redmine/default/database.yml

# puma joins Redmine's bundle (its Gemfile reads Gemfile.local); the lock file is made anew from Debian's gems.
echo "gem 'puma'" > /usr/share/redmine/Gemfile.local
echo 'config.log_level = :warn' > /etc/redmine/default/additional_environment.rb
ln -sf /etc/redmine/default/additional_environment.rb /usr/share/redmine/config/additional_environment.rb
cd /usr/share/redmine
rm -f /var/lib/redmine/Gemfile.lock
bundle install --local --quiet
chown www-data:www-data /var/lib/redmine/Gemfile.lock

as_redmine () { runuser -u www-data -- env RAILS_ENV=production REDMINE_INSTANCE=default "$@"; }
# The schema dump after migrating would write into the package's own files.
as_redmine env SCHEMA=/dev/null bundle exec rake db:migrate redmine:plugins:migrate
as_redmine env REDMINE_LANG=en bundle exec rake redmine:load_default_data

# The REST API on, the administrator usable through it, the projects.
chown www-data "$DIR"
cat > "$DIR/bootstrap.rb" <<RUBY
Setting.rest_api_enabled = '1'
admin = User.find_by_login('admin') or raise 'no admin user'
admin.must_change_passwd = false
admin.status = User::STATUS_ACTIVE
admin.save!(validate: false)
File.write('$DIR/api_key', admin.api_key + "\n")
Project.transaction do
  (1..1000).each do |i|
    identifier = format('bench-%04d', i)
    Project.find_by(identifier: identifier) || Project.create!(name: "Bench #{format('%04d', i)}", identifier: identifier, is_public: true)
  end
end
RUBY
as_redmine bundle exec rails runner "$DIR/bootstrap.rb"

mkdir -p /var/cache/redmine/default/tmp/pids
chown www-data:www-data /var/cache/redmine/default/tmp/pids
cat > /etc/redmine/default/puma.rb <<RB
directory '/usr/share/redmine'
rackup '/usr/share/redmine/config.ru'
environment 'production'
bind 'tcp://127.0.0.1:$PORT'
workers 2
threads 5, 5
preload_app!
worker_timeout 60
pidfile '/var/cache/redmine/default/tmp/pids/puma.pid'
state_path '/var/cache/redmine/default/tmp/pids/puma.state'
stdout_redirect '/var/log/redmine/default/puma.stdout.log', '/var/log/redmine/default/puma.stderr.log', true
before_fork do
  ActiveRecord::Base.connection_pool.disconnect! if defined?(ActiveRecord::Base)
end
on_worker_boot do
  ActiveRecord::Base.establish_connection if defined?(ActiveRecord::Base)
end
RB

cat > "$DIR/stop.sh" <<'STOP'
#!/bin/bash
# Stops Redmine's puma: TERM to its master, KILL after 30 s.
PIDFILE=/var/cache/redmine/default/tmp/pids/puma.pid
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
  PID=$(cat "$PIDFILE")
  kill -TERM "$PID"
  for _ in $(seq 1 30); do kill -0 "$PID" 2>/dev/null || break; sleep 1; done
  kill -0 "$PID" 2>/dev/null && kill -KILL "$PID"
fi
rm -f "$PIDFILE"
STOP
cat > "$DIR/start.sh" <<START
#!/bin/bash
# (Re)starts Redmine's puma in the background, detached from the calling shell.
set -e
"$DIR/stop.sh"
cd /usr/share/redmine
setsid nohup runuser -u www-data -- env RAILS_ENV=production REDMINE_INSTANCE=default \\
  bundle exec puma -C /etc/redmine/default/puma.rb </dev/null >>/var/log/redmine/default/puma.nohup.log 2>&1 &
for _ in \$(seq 1 60); do
  [ "\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/login || true)" = 200 ] && exit 0
  sleep 1
done
echo "puma did not start; see /var/log/redmine/default/puma.*.log" >&2
exit 1
START
chmod +x "$DIR/start.sh" "$DIR/stop.sh"
"$DIR/start.sh"

KEY=$(cat "$DIR/api_key")
echo "Redmine is up (start and stop: $DIR/start.sh, $DIR/stop.sh). For npm run bench:"
echo "  export BENCH_REDMINE_URL=http://127.0.0.1:$PORT BENCH_REDMINE_KEY=$KEY"
