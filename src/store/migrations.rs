//! Numbered schema migrations, tracked in `PRAGMA user_version`.
//!
//! Each step runs once, in order, inside one transaction with the version
//! bump. Steps are only ever appended: an edited step would not run again on
//! databases that already have it. Rejected: `rusqlite_migration`, which
//! does the same in more code and pins rusqlite to an older line.

use rusqlite::Connection;

use super::StoreError;

/// The schema, one entry per version (index 0 = version 1).
const STEPS: &[&str] = &[
    // 1: agents with their topology, the approval queue, crash records.
    "CREATE TABLE agents (
        name          TEXT PRIMARY KEY,
        parent        TEXT,
        created_at    INTEGER NOT NULL,
        status_text   TEXT,
        status_set_at INTEGER,
        deployed_sha  TEXT,
        needs_update  INTEGER NOT NULL DEFAULT 0,
        needs_login   INTEGER NOT NULL DEFAULT 0,
        active_model  TEXT
    );
    CREATE TABLE approvals (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        agent        TEXT NOT NULL,
        kind         TEXT NOT NULL,
        commit_ref   TEXT NOT NULL DEFAULT '',
        fetched_sha  TEXT,
        requested_at INTEGER NOT NULL,
        status       TEXT NOT NULL DEFAULT 'pending',
        resolved_at  INTEGER,
        note         TEXT,
        description  TEXT,
        -- set while an approve runs the row's action: the claim that makes
        -- the action run once however many approves race
        claimed      INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX approvals_by_status ON approvals(status, id);
    CREATE TABLE crashes (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        agent  TEXT NOT NULL,
        at     INTEGER NOT NULL,
        result TEXT NOT NULL
    );",
    // 2: the broker's messages. `recipient` is an agent name or `operator`;
    // `state` moves pending -> inflight (popped by recv) -> handled (acked).
    "CREATE TABLE messages (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        sender      TEXT NOT NULL,
        recipient   TEXT NOT NULL,
        body        TEXT NOT NULL,
        in_reply_to INTEGER,
        at          INTEGER NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending',
        redelivered INTEGER NOT NULL DEFAULT 0,
        popped_at   INTEGER,
        handled_at  INTEGER
    );
    CREATE INDEX messages_inbox ON messages(recipient, state, id);",
    // 3: the agenda — questions, reminders, scheduled prompts — and the
    // per-agent grants. Self-contained: no foreign keys into other steps.
    // Time columns are unix seconds from the daemon's clock.
    "CREATE TABLE questions (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        asker       TEXT NOT NULL,
        -- an agent name; NULL = the operator
        target      TEXT,
        question    TEXT NOT NULL,
        options     TEXT NOT NULL DEFAULT '[]',
        multi       INTEGER NOT NULL DEFAULT 0,
        asked_at    INTEGER NOT NULL,
        expires_at  INTEGER,
        -- set together when the question closes (answered, expired, or
        -- withdrawn by its asker: answerer = 'cancelled')
        answer      TEXT,
        answerer    TEXT,
        answered_at INTEGER
    );
    CREATE INDEX questions_open ON questions(answered_at, expires_at);
    CREATE TABLE reminders (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        owner        TEXT NOT NULL,
        message      TEXT NOT NULL,
        due_at       INTEGER NOT NULL,
        created_at   INTEGER NOT NULL,
        sent_at      INTEGER,
        cancelled_at INTEGER
    );
    CREATE INDEX reminders_due ON reminders(sent_at, cancelled_at, due_at);
    CREATE TABLE schedules (
        id                 INTEGER PRIMARY KEY AUTOINCREMENT,
        owner              TEXT NOT NULL,
        body               TEXT NOT NULL,
        interval_seconds   INTEGER,
        next_fire_at       INTEGER NOT NULL,
        created_at         INTEGER NOT NULL,
        source_approval_id INTEGER,
        cancelled_at       INTEGER,
        description        TEXT
    );
    CREATE TABLE schedule_targets (
        schedule_id    INTEGER NOT NULL,
        target         TEXT NOT NULL,
        cancelled_at   INTEGER,
        last_fired_at  INTEGER,
        last_result    TEXT,
        PRIMARY KEY (schedule_id, target)
    );
    CREATE TABLE grants (
        agent TEXT NOT NULL,
        -- 'capability' or 'tool_group'
        kind  TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (agent, kind, value)
    );
    -- agents whose tool groups were set explicitly (possibly to none);
    -- the others get the default groups
    CREATE TABLE tool_groups_set (agent TEXT PRIMARY KEY);",
    // 4: the swarm. The outbox holds cross-hive messages until the bus
    // acknowledged them; `seq` numbers them per destination hive (from 1, no
    // gaps) so the receiver keeps order and spots a second copy. The inbound
    // side remembers the last `seq` inserted per source hive, and each
    // inserted message keeps its swarm-wide id `<source>.<seq>`, unique.
    "CREATE TABLE swarm_outbox (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        dest_hive TEXT NOT NULL,
        seq       INTEGER NOT NULL,
        sender    TEXT NOT NULL,
        recipient TEXT NOT NULL,
        body      TEXT NOT NULL,
        at        INTEGER NOT NULL,
        sent_at   INTEGER,
        UNIQUE (dest_hive, seq)
    );
    CREATE INDEX swarm_outbox_unsent ON swarm_outbox(sent_at, id);
    CREATE TABLE swarm_out_seq (dest_hive TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
    CREATE TABLE swarm_in_seq (source_hive TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
    ALTER TABLE messages ADD COLUMN swarm_id TEXT;
    CREATE UNIQUE INDEX messages_swarm_id ON messages(swarm_id) WHERE swarm_id IS NOT NULL;",
    // 5: Claude Code hooks: the session state on the roster and the newest
    // raw hook events per agent (bounded by store::hooks).
    "ALTER TABLE agents ADD COLUMN session_state TEXT;
    ALTER TABLE agents ADD COLUMN session_message TEXT;
    ALTER TABLE agents ADD COLUMN session_since INTEGER;
    CREATE TABLE hook_events (
        id    INTEGER PRIMARY KEY AUTOINCREMENT,
        agent TEXT NOT NULL,
        at    INTEGER NOT NULL,
        event TEXT NOT NULL,
        raw   TEXT NOT NULL
    );
    CREATE INDEX hook_events_agent ON hook_events (agent, id);",
    // 6: `<children>` finds an agent's children by index (a send reads the
    // rows it needs, not the whole registry).
    "CREATE INDEX agents_by_parent ON agents(parent, name);",
    // 7: the inbox indexes hold only live rows. The key (recipient, state,
    // id) moved every message twice (pending -> inflight -> handled), each
    // move dirtying index pages the commit writes to the WAL; partial
    // indexes over pending and in-flight rows stay a few pages, and the
    // history (`recent`) keeps an insert-only (recipient, id) index.
    "DROP INDEX messages_inbox;
    CREATE INDEX messages_by_recipient ON messages(recipient, id);
    CREATE INDEX messages_pending ON messages(recipient, id) WHERE state = 'pending';
    CREATE INDEX messages_inflight ON messages(recipient) WHERE state = 'inflight';",
    // 8: a spawn or destroy in progress, committed before its container is
    // touched and cleared when it is done, so a daemon killed half way
    // finishes it at start (a missing container is then a spawn to finish
    // or a destroy to finish, never a guess).
    "CREATE TABLE lifecycle_intents (
        agent TEXT PRIMARY KEY,
        op    TEXT NOT NULL CHECK (op IN ('spawn', 'destroy', 'purge')),
        at    INTEGER NOT NULL
    );",
    // 9: the turn journal (store::turns): the report whole, and the
    // columns usage sums, by agent and by time.
    "CREATE TABLE turns (
        id                    INTEGER PRIMARY KEY AUTOINCREMENT,
        agent                 TEXT NOT NULL,
        started_at_ms         INTEGER NOT NULL,
        ended_at_ms           INTEGER NOT NULL,
        outcome               TEXT NOT NULL,
        model                 TEXT,
        input_tokens          INTEGER NOT NULL,
        output_tokens         INTEGER NOT NULL,
        cache_read_tokens     INTEGER NOT NULL,
        cache_creation_tokens INTEGER NOT NULL,
        cost_micro_usd        INTEGER NOT NULL,
        report                TEXT NOT NULL
    );
    CREATE INDEX turns_by_agent ON turns(agent, id);
    CREATE INDEX turns_by_end ON turns(ended_at_ms);",
    // 10: egress grants: a host[:port] pattern an agent may reach beyond the
    // config's egress_allow, until `expires_at` (unix seconds) if set;
    // `approval_id` when a `request_egress` approval granted it.
    "CREATE TABLE egress_grants (
        agent TEXT NOT NULL,
        pattern TEXT NOT NULL,
        granted_at INTEGER NOT NULL,
        expires_at INTEGER,
        approval_id INTEGER,
        PRIMARY KEY (agent, pattern)
    );",
    // 11: spend caps the operator set (store::spend_caps): one per scope
    // ('' the hive, else the agent whose subtree it covers) and unit; the
    // amount as written (`20usd/day`); `approval_id` when an approved
    // `request_budget` set it.
    "CREATE TABLE spend_caps (
        scope TEXT NOT NULL,
        unit TEXT NOT NULL CHECK (unit IN ('usd', 'tokens')),
        amount TEXT NOT NULL,
        set_at INTEGER NOT NULL,
        approval_id INTEGER,
        PRIMARY KEY (scope, unit)
    );",
    // 12: the turn journal's sums per agent, UTC day (`ended_at_ms` /
    // 86,400,000) and model ('-' for none), kept as turns are reported, so
    // `usage` and the budgets read a row per agent and day instead of
    // every turn (store::turns); and each agent's count of kept turns, so
    // the retention deletes the oldest without walking the newest 10,000.
    // Both filled from the turns kept so far.
    "CREATE TABLE turn_days (
        agent                 TEXT NOT NULL,
        day                   INTEGER NOT NULL,
        model                 TEXT NOT NULL,
        turns                 INTEGER NOT NULL,
        input_tokens          INTEGER NOT NULL,
        output_tokens         INTEGER NOT NULL,
        cache_read_tokens     INTEGER NOT NULL,
        cache_creation_tokens INTEGER NOT NULL,
        cost_micro_usd        INTEGER NOT NULL,
        PRIMARY KEY (day, agent, model)
    ) WITHOUT ROWID;
    INSERT INTO turn_days
        SELECT agent, ended_at_ms / 86400000, COALESCE(model, '-'), COUNT(*),
            SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens),
            SUM(cache_creation_tokens), SUM(cost_micro_usd)
        FROM turns GROUP BY 1, 2, 3;
    CREATE TABLE turn_counts (
        agent TEXT PRIMARY KEY,
        kept  INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO turn_counts SELECT agent, COUNT(*) FROM turns GROUP BY agent;",
    // 13: how far the daemon has read each interactive session's transcript
    // (store::transcripts): per agent and path (under the agent's state
    // directory), the byte offset of the next unread line, whether it is
    // inside an over-long line, the message ids counted lately (JSON), and
    // when it was last read (the bound per agent drops the oldest).
    "CREATE TABLE transcript_cursors (
        agent      TEXT NOT NULL,
        path       TEXT NOT NULL,
        session_id TEXT,
        offset     INTEGER NOT NULL,
        skipping   INTEGER NOT NULL DEFAULT 0,
        recent_ids TEXT NOT NULL DEFAULT '[]',
        read_at    INTEGER NOT NULL,
        PRIMARY KEY (agent, path)
    ) WITHOUT ROWID;",
    // 14: a message in flight is the service's memory; the row stays
    // `pending` with `popped_at` set (written with the next commit, not
    // waited for). Rows in flight under the old scheme become exactly that,
    // and their index goes: a `recv` touches no index page. Waiting rows
    // are found by id, not by recipient: the service counts each inbox in
    // memory, and an index keyed by id takes each insert and ack at its
    // newest pages rather than one leaf per recipient.
    "UPDATE messages SET state = 'pending', popped_at = COALESCE(popped_at, at)
        WHERE state = 'inflight';
    DROP INDEX messages_inflight;
    DROP INDEX messages_pending;
    CREATE INDEX messages_waiting ON messages(id) WHERE state = 'pending';",
    // 15: the history's index by recipient is kept behind the table, not
    // with each insert: `messages_by_recipient` took one leaf page per
    // recipient into every commit (4 KB of WAL per message at 1,000
    // agents). `message_index` holds (recipient, id) for every row up to
    // `message_index_mark.upto`; the writer adds the rows past it at most
    // once a second (`messages::index_tail`), and readers scan the few
    // rows past the mark by id (`messages::recent`).
    "DROP INDEX messages_by_recipient;
    CREATE TABLE message_index (
        recipient TEXT NOT NULL,
        id        INTEGER NOT NULL,
        PRIMARY KEY (recipient, id)
    ) WITHOUT ROWID;
    CREATE TABLE message_index_mark (
        one  INTEGER PRIMARY KEY CHECK (one = 1),
        upto INTEGER NOT NULL
    );
    INSERT INTO message_index SELECT recipient, id FROM messages ORDER BY recipient, id;
    INSERT INTO message_index_mark VALUES (1, (SELECT COALESCE(MAX(id), 0) FROM messages));",
    // 16: the pause is the host's (issue 44): a flag in the store, not a
    // marker file in the agent's own state, which any of its processes
    // could delete. NULL: an agent from before this step, whose old marker
    // the daemon reads once at its next start (`startup::import_pause_markers`).
    "ALTER TABLE agents ADD COLUMN paused INTEGER;",
    // 17: the egress audit (issue 44, store::egress_log): one row per
    // connection of an agent through the hive's proxy (or refused ones of
    // one verdict, target and minute counted into one: `count`, found by
    // the partial index), kept newest-first up to a bound per agent. `at_ms` is when its first connection came; `target` the
    // `host:port` asked for, `address` the one dialled or refused.
    "CREATE TABLE egress_log (
        id      INTEGER PRIMARY KEY,
        agent   TEXT NOT NULL,
        at_ms   INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        count   INTEGER NOT NULL DEFAULT 1,
        target  TEXT,
        address TEXT,
        reason  TEXT,
        up      INTEGER NOT NULL,
        down    INTEGER NOT NULL,
        ms      INTEGER NOT NULL
    );
    CREATE INDEX egress_log_by_agent ON egress_log(agent, id);
    CREATE INDEX egress_log_merging ON egress_log(agent, verdict, target, at_ms)
        WHERE verdict <> 'allowed';",
    // 18: the model gateway's meter (issue 46, store::model_log): one row
    // per request an agent made to the model, as the upstream answered it
    // (tokens, status, request id) and the list cost of the shipped price
    // table in millionths of a dollar (NULL: the model is not priced),
    // kept newest-first up to a bound per agent.
    "CREATE TABLE model_log (
        id             INTEGER PRIMARY KEY,
        agent          TEXT NOT NULL,
        at_ms          INTEGER NOT NULL,
        route          TEXT NOT NULL,
        model          TEXT,
        status         INTEGER NOT NULL,
        input          INTEGER NOT NULL,
        output         INTEGER NOT NULL,
        cache_write    INTEGER NOT NULL,
        cache_read     INTEGER NOT NULL,
        cost_micro_usd INTEGER,
        ms             INTEGER NOT NULL,
        request_id     TEXT,
        error          TEXT
    );
    CREATE INDEX model_log_by_agent ON model_log(agent, id);",
    // 19: the answers kept for repeated requests (issue 47, store::replies):
    // an agent's request that carried an idempotency key, the answer it got
    // (a `Response` as JSON), per agent, the newest ones kept.
    "CREATE TABLE replies (
        id     INTEGER PRIMARY KEY,
        agent  TEXT NOT NULL,
        key    TEXT NOT NULL,
        answer TEXT NOT NULL,
        at_ms  INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX replies_by_key ON replies(agent, key);
    CREATE INDEX replies_by_agent ON replies(agent, id);",
    // 20: the meter's sums per agent, UTC hour (`at_ms` / 3,600,000) and
    // model ('-' for none), added to in the transaction that writes each
    // `model_log` row (issue 46, step 2: metered spend is the spend), so
    // spend and every budget's window outlive the rows' bound; `unpriced`
    // counts requests with tokens and no list cost. Filled from the rows
    // kept so far. The rows get an index by time: a window's part before
    // its first whole hour is read from them.
    "CREATE TABLE model_hours (
        agent          TEXT NOT NULL,
        hour           INTEGER NOT NULL,
        model          TEXT NOT NULL,
        requests       INTEGER NOT NULL,
        input          INTEGER NOT NULL,
        output         INTEGER NOT NULL,
        cache_write    INTEGER NOT NULL,
        cache_read     INTEGER NOT NULL,
        cost_micro_usd INTEGER NOT NULL,
        unpriced       INTEGER NOT NULL,
        PRIMARY KEY (hour, agent, model)
    ) WITHOUT ROWID;
    INSERT INTO model_hours
        SELECT agent, at_ms / 3600000, COALESCE(model, '-'), COUNT(*), SUM(input),
            SUM(output), SUM(cache_write), SUM(cache_read),
            SUM(COALESCE(cost_micro_usd, 0)),
            SUM(cost_micro_usd IS NULL AND input + output + cache_write + cache_read > 0)
        FROM model_log GROUP BY 1, 2, 3;
    CREATE INDEX model_log_by_time ON model_log(at_ms);",
];

/// The schema version this build writes.
pub fn latest() -> i64 {
    STEPS.len() as i64
}

/// Bring the database up to [`latest`].
pub fn apply(conn: &mut Connection) -> Result<(), StoreError> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > latest() {
        return Err(StoreError::TooNew {
            found: current,
            known: latest(),
        });
    }
    for (index, sql) in STEPS.iter().enumerate().skip(current as usize) {
        let tx = super::immediate(conn)?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "migrations_tests.rs"]
mod tests;
