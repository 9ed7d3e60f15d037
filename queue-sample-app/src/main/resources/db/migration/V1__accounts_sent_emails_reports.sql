-- The application's own tables. pgqueue keeps its jobs table and migration history apart
-- (pgqueue_schema_history), so these migrations never see it.

CREATE TABLE accounts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text        NOT NULL,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

-- One row per email actually sent. The key is the job's id: in a transactional queue the row
-- commits together with the job's completion, so a job can never be recorded twice.
CREATE TABLE sent_emails (
    job_id     uuid        PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id),
    kind       text        NOT NULL,
    sent_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX sent_emails_account_id_idx ON sent_emails (account_id);

-- Keyed by the job's id too: a leased job may run more than once (at least once), and writing
-- its result again must replace the first one rather than add a second.
CREATE TABLE reports (
    job_id       uuid        PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id),
    month        date        NOT NULL,
    emails_sent  integer     NOT NULL,
    attempt      integer     NOT NULL,
    generated_at timestamptz NOT NULL DEFAULT now()
);
