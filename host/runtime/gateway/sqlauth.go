package gateway

import (
	"fmt"
	"strings"

	sqlitedrv "modernc.org/sqlite"
)

// LedgerTablePrefix starts the name of every table the host keeps in a
// database's own file (the migration ledger of spec/runtime-v1.md §9.3):
// worker SQL touching one is refused (§5.3).
const LedgerTablePrefix = "_takoform"

// authMode says what the statement being compiled may do.
type authMode int

const (
	authHost    authMode = iota // the gateway's own BEGIN/COMMIT/ROLLBACK, and tail probes: anything
	authExecute                 // execute and transaction: worker SQL, writes allowed
	authQuery                   // query: worker SQL, reads only
)

// policy is SQLite's authorizer for worker SQL (spec/runtime-v1.md §5.3,
// v1alpha1 family): the engine reports every action while it compiles a
// statement, and policy refuses transaction control, ATTACH/DETACH,
// load_extension, every PRAGMA but the reading ones, the host's own
// tables and, under query, every write. It also records whether the
// statement is itself an INSERT, UPDATE or DELETE (not one a trigger
// runs), which says whether sqlite3_changes counts it.
type policy struct {
	mode   authMode
	denied string // why the last refused action was refused
	dml    bool
	insert bool
	// fixedSchema refuses every schema change to worker SQL: the v1beta1
	// edge.sql, whose schema changes through migrations only
	// (spec/runtime-v1.md §5.3, §9.3). It outlives reset.
	fixedSchema bool
}

// reset prepares p for compiling one statement under mode.
func (p *policy) reset(mode authMode) { *p = policy{mode: mode, fixedSchema: p.fixedSchema} }

// schemaActions are the authorizer actions that change a schema (main or
// temp): refused under fixedSchema. ANALYZE is among them, as it creates
// the sqlite_stat tables when they are missing.
var schemaActions = map[sqlitedrv.AuthorizerActionCode]bool{
	sqlitedrv.AuthCreateIndex: true, sqlitedrv.AuthCreateTable: true, sqlitedrv.AuthCreateTempIndex: true,
	sqlitedrv.AuthCreateTempTable: true, sqlitedrv.AuthCreateTempTrigger: true, sqlitedrv.AuthCreateTempView: true,
	sqlitedrv.AuthCreateTrigger: true, sqlitedrv.AuthCreateView: true, sqlitedrv.AuthCreateVTable: true,
	sqlitedrv.AuthDropIndex: true, sqlitedrv.AuthDropTable: true, sqlitedrv.AuthDropTempIndex: true,
	sqlitedrv.AuthDropTempTable: true, sqlitedrv.AuthDropTempTrigger: true, sqlitedrv.AuthDropTempView: true,
	sqlitedrv.AuthDropTrigger: true, sqlitedrv.AuthDropView: true, sqlitedrv.AuthDropVTable: true,
	sqlitedrv.AuthAlterTable: true, sqlitedrv.AuthAnalyze: true,
}

// Reading PRAGMAs: allowed with no value, or with the table, index or
// limit they read. Any other PRAGMA (every writing one among them, and
// database_list, which shows a host path) is refused.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true, "collation_list": true, "function_list": true, "module_list": true, "pragma_list": true,
	"compile_options": true,
}

// readOnlyWithoutValue are PRAGMAs that read a setting when given no value
// and write it when given one.
var readOnlyWithoutValue = map[string]bool{
	"user_version": true, "schema_version": true, "application_id": true, "page_count": true, "page_size": true,
	"freelist_count": true, "data_version": true, "encoding": true, "foreign_keys": true, "auto_vacuum": true,
	"journal_mode": true, "max_page_count": true, "recursive_triggers": true, "defer_foreign_keys": true,
	"cache_size": true, "synchronous": true, "locking_mode": true,
}

var schemaTables = map[string]bool{"sqlite_master": true, "sqlite_schema": true, "sqlite_temp_master": true, "sqlite_temp_schema": true}

func hostTable(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), LedgerTablePrefix)
}

func (p *policy) deny(format string, a ...any) sqlitedrv.AuthorizerReturnCode {
	p.denied = fmt.Sprintf(format, a...)
	return sqlitedrv.AuthorizerDeny
}

// authorize is the sqlitedrv.AuthorizerFn (arguments as SQLite's
// authorizer callback's third to sixth).
func (p *policy) authorize(action sqlitedrv.AuthorizerActionCode, arg1, arg2, _, trigger string) sqlitedrv.AuthorizerReturnCode {
	if p.mode == authHost {
		return sqlitedrv.AuthorizerOK
	}
	switch action {
	case sqlitedrv.AuthTransaction, sqlitedrv.AuthSavepoint:
		return p.deny("transaction control (BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE) is refused: each call is one transaction; send several statements with transaction()")
	case sqlitedrv.AuthAttach, sqlitedrv.AuthDetach:
		return p.deny("ATTACH and DETACH are refused: a binding reaches its own database only")
	case sqlitedrv.AuthPragma:
		name := strings.ToLower(arg1)
		if readPragmas[name] || (readOnlyWithoutValue[name] && arg2 == "") {
			return sqlitedrv.AuthorizerOK
		}
		return p.deny("PRAGMA %s is refused: only reading PRAGMAs run here", arg1)
	case sqlitedrv.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return p.deny("load_extension is refused: a binding loads no code into the host")
		}
		return sqlitedrv.AuthorizerOK
	}
	if p.fixedSchema && schemaActions[action] {
		return p.deny("schema changes (CREATE, DROP, ALTER, ANALYZE) are refused at runtime in %s: a database's schema changes only through a SQLiteMigrationApplication", groupBeta)
	}
	table := arg1
	switch action {
	case sqlitedrv.AuthCreateIndex, sqlitedrv.AuthCreateTempIndex, sqlitedrv.AuthDropIndex, sqlitedrv.AuthDropTempIndex,
		sqlitedrv.AuthCreateTrigger, sqlitedrv.AuthCreateTempTrigger, sqlitedrv.AuthDropTrigger, sqlitedrv.AuthDropTempTrigger:
		table = arg2
	case sqlitedrv.AuthAlterTable:
		table = arg2
	}
	if table != "" && hostTable(table) {
		return p.deny("the table %s belongs to the host: worker SQL never reads or writes tables named %s…", table, LedgerTablePrefix)
	}
	write := true
	switch action {
	case sqlitedrv.AuthRead, sqlitedrv.AuthSelect, sqlitedrv.AuthRecursive:
		write = false
	case sqlitedrv.AuthInsert, sqlitedrv.AuthUpdate, sqlitedrv.AuthDelete:
		if trigger == "" && !schemaTables[strings.ToLower(arg1)] {
			p.dml = true
			if action == sqlitedrv.AuthInsert {
				p.insert = true
			}
		}
	}
	if write && p.mode == authQuery {
		return p.deny("query runs reading statements only; send writes with execute()")
	}
	return sqlitedrv.AuthorizerOK
}
