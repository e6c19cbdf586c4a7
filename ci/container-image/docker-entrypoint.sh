#!/usr/bin/env bash
# The official postgres image's entrypoint contract (docker-library/postgres,
# docker-entrypoint.sh), cut to what coldgate and its tests rely on:
#   - arguments starting with '-' are arguments of `postgres` (`-c k=v`);
#   - started as root, it fixes folder ownership and re-executes itself as postgres;
#   - on an empty $PGDATA: initdb with POSTGRES_USER / POSTGRES_PASSWORD, a pg_hba line for
#     POSTGRES_HOST_AUTH_METHOD (scram-sha-256 by default), a temporary server on the Unix
#     socket only to create POSTGRES_DB and run /docker-entrypoint-initdb.d/*.sql|*.sh, then
#     stop it — so the server restarts once after init, exactly like the official image.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi
if [ "$1" != 'postgres' ]; then
  exec "$@"
fi

if [ "$(id -u)" = '0' ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  chmod 3777 /var/run/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

shift  # the rest are postgres arguments

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  auth=${POSTGRES_HOST_AUTH_METHOD:-}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != 'trust' ]; then
    cat >&2 <<'MSG'
Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the
       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".
MSG
    exit 1
  fi
  # shellcheck disable=SC2206 # POSTGRES_INITDB_ARGS is word-split on purpose, as upstream
  initdb_args=(--username="$user" ${POSTGRES_INITDB_ARGS:-})
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    initdb "${initdb_args[@]}" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD")
  else
    initdb "${initdb_args[@]}"
  fi
  printf '\nhost all all all %s\n' "${auth:-scram-sha-256}" >>"$PGDATA/pg_hba.conf"

  # Temporary server: Unix socket only, so nothing outside sees it before init is complete.
  temp_args=("$@" -c listen_addresses= -p 5432)
  pg_ctl -D "$PGDATA" -w -o "$(printf '%q ' "${temp_args[@]}")" start
  if [ "$db" != 'postgres' ]; then
    psql -v ON_ERROR_STOP=1 --username "$user" --no-password --dbname postgres \
      --set db="$db" <<<'CREATE DATABASE :"db";'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "$0: running $f"; . "$f" ;;
      *.sql) echo "$0: running $f"
        psql -v ON_ERROR_STOP=1 --username "$user" --no-password --dbname "$db" -f "$f" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  echo
  echo 'PostgreSQL init process complete; ready for start up.'
  echo
fi

exec postgres "$@"
