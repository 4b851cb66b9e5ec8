package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/takoform/takoform/host/store/sqlcore"
	"github.com/takoform/takoform/host/store/sqlrow"
)

// query names one prepared statement. Each is prepared once per connection
// (database/sql reuses it inside transactions) and each lookup is served by
// a primary key or index of migrations/ (TestQueryPlans checks it).
type query int

const (
	qKeyState = query(sqlcore.NumStmts) + iota
	qNext
	qSavepoint
	qRollbackToSavepoint
	qReleaseSavepoint
	qBegin
	qRollback
	qExactAnswer
	qQueueSend
	qLedgerLength
	qLedgerAppend
	qLedgerHead
	qQueueClaimable
	qQueueClaim
	qQueueAck
	qQueueStats
	qQueueDeliverable
	numQueries
)

// queries are the texts of every statement: the shared ones
// (sqlcore.Text, filled in by init) then the store's own.
var queries = [numQueries]string{
	// Tx.KeyState in one statement (keystate.go): one row per part, tagged
	// by its first column and padded with NULL to the widest part.
	qKeyState: `SELECT ` + strconv.FormatInt(partReplay, 10) + `, ` + sqlrow.IdempotencyValueCols + `, NULL, NULL, NULL, NULL, NULL, NULL, NULL
		FROM idempotency WHERE tenant = ?1 AND principal = ?2 AND space = ?3 AND key = ?4 AND lane = ?10
		UNION ALL SELECT ` + strconv.FormatInt(partResource, 10) + `, ` + sqlrow.ResourceValueCols + ` FROM resources
		WHERE tenant = ?5 AND space = ?6 AND api_version = ?7 AND kind = ?8 AND name = ?9
		UNION ALL SELECT ` + strconv.FormatInt(partPending, 10) + `, ` + sqlrow.PendingOperationCols + `, NULL, NULL, NULL FROM operations
		WHERE id = (SELECT id FROM operations WHERE done = 0 AND target_tenant = ?5 AND target_space = ?6
		AND target_api_version = ?7 AND target_kind = ?8 AND target_name = ?9 ORDER BY created_at, id LIMIT 1)
		UNION ALL SELECT ` + strconv.FormatInt(partPin, 10) + `, ` + sqlrow.PinCols + `, ord, NULL FROM pins
		WHERE tenant = ?5 AND space = ?6 AND target_api_version = ?7 AND target_kind = ?8 AND target_name = ?9`,
	qNext: `INSERT INTO sequences (name, value) VALUES (?, 1)
		ON CONFLICT (name) DO UPDATE SET value = value + 1
		RETURNING value`,
	// Each Update function runs in its own savepoint of the batch.
	qSavepoint:           `SAVEPOINT fn`,
	qRollbackToSavepoint: `ROLLBACK TO fn`,
	qReleaseSavepoint:    `RELEASE fn`,
	// A View's read transaction on its reader (readers.go).
	qBegin:    `BEGIN`,
	qRollback: `ROLLBACK`,
	// Store.ExactAnswer, outside any transaction (readers.go), of a
	// FormRef whose group and kind are the key's: they are bound once.
	qExactAnswer: `SELECT ` + unnamed(sqlrow.ExactAnswerCols) + ` FROM resources
		WHERE tenant = ? AND space = ? AND api_version = ? AND kind = ? AND name = ?
		AND form_api_version = api_version AND form_kind = kind
		AND form_definition_version = ? AND form_schema_digest = ?`,
	qQueueSend: `INSERT INTO queue_messages (queue, id, tenant, body, accepted_at, deliverable_at, attempts, size)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	// migration ledgers (ledger.go).
	qLedgerLength: `SELECT length FROM migration_ledgers WHERE database = ?`,
	qLedgerAppend: `INSERT INTO migration_ledger_entries (database, position, path, digest) VALUES (?, ?, ?, ?)`,
	qLedgerHead: `INSERT INTO migration_ledgers (database, tenant, length) VALUES (?, ?, ?)
		ON CONFLICT (database) DO UPDATE SET length = excluded.length`,
	// cron firings and queue delivery (events.go).
	qQueueClaimable: `SELECT tenant, id, body, accepted_at, attempts FROM queue_messages
		WHERE queue = ? AND deliverable_at <= ? ORDER BY deliverable_at, id LIMIT ?`,
	qQueueClaim: `UPDATE queue_messages SET claim = ?3, deliverable_at = ?4, attempts = attempts + 1, claim_epoch = ?5
		WHERE queue = ?1 AND id = ?2`,
	qQueueAck: `DELETE FROM queue_messages WHERE queue = ? AND id = ? AND claim = ?`,
	qQueueStats: `SELECT count(*), coalesce(min(accepted_at), 0), coalesce(min(deliverable_at), 0)
		FROM queue_messages WHERE queue = ?`,
	qQueueDeliverable: `SELECT count(*) FROM queue_messages WHERE queue = ? AND deliverable_at <= ?`,
}

func init() {
	for s := range sqlcore.NumStmts {
		queries[s] = sqlcore.Text(sqlcore.SQLite, s)
	}
}

// unnamed writes the column list cols as a select list of unnamed
// expressions, each the column's own value: +col AS "". The driver copies
// each result column's name and declared type into a Go string on every
// query it runs; an expression has no declared type, and "" no name to
// copy (PERFORMANCE.md, log entry "The host's CPU per exact read").
func unnamed(cols string) string {
	var b strings.Builder
	for i, c := range strings.Split(cols, ",") {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("+" + strings.TrimSpace(c) + ` AS ""`)
	}
	return b.String()
}

// statements are the queries prepared on one *sql.DB or *sql.Conn.
type statements [numQueries]*sql.Stmt

// preparer is an *sql.DB or an *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

func prepare(ctx context.Context, db preparer) (*statements, error) {
	var st statements
	for q, text := range queries {
		if query(q) == qExactAnswer {
			continue // prepared on each reader's driver connection (rawStmt)
		}
		s, err := db.PrepareContext(ctx, text)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare statement %d: %w", q, err), st.close())
		}
		st[q] = s
	}
	return &st, nil
}

func (st *statements) close() error {
	var errs []error
	for _, s := range st {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
