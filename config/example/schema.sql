-- Tables the example stages read. Loaded by the `sql:` setup step.
create table app_config (
  key        text primary key,
  value      jsonb not null,
  updated_at timestamptz not null default now()
);

create table audit_log (
  id      bigserial primary key,
  at      timestamptz not null default now(),
  message text not null
);
