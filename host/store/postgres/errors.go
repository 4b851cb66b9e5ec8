package postgres

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/host/store/sqlcore"
)

// SQLSTATE codes the store tells apart (PostgreSQL manual, Appendix A).
const (
	codeUniqueViolation      = "23505"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	// codeExpectation is raised by takoform_expect (migration 00006): a
	// key state taken for granted is not so.
	codeExpectation = "TK001"
)

// unavailableCodes are the SQLSTATEs of a server that cannot serve now but
// may soon: connection exceptions (class 08), shutting down or starting
// (57P01–57P03), too many connections (53300).
var unavailableCodes = map[string]bool{
	"57P01": true, "57P02": true, "57P03": true, "53300": true,
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isRetryable reports a serialization failure or deadlock: the
// transaction may succeed when run again from the start.
func isRetryable(err error) bool {
	c := pgCode(err)
	return c == codeSerializationFailure || c == codeDeadlockDetected
}

func isConflict(err error) bool { return pgCode(err) == codeUniqueViolation }

// isUnavailable reports an error of a lost or refused connection.
func isUnavailable(err error) bool {
	if c := pgCode(err); c != "" {
		return strings.HasPrefix(c, "08") || unavailableCodes[c]
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed)
}

// classify wraps an error of a lost or refused connection with
// store.ErrUnavailable and returns every other error as is.
func classify(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) || !isUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// notFound turns pgx.ErrNoRows (which wraps sql.ErrNoRows) into
// store.ErrNotFound, wrapped with what.
func notFound(err error, what string) error { return sqlcore.NotFound(err, what) }

// parseProblem says why pgx refused the configuration of rawURL, without
// its password: pgx's reason, which names the setting or the part it
// refused (sslmode, connect_timeout, pool_max_conns, a bad escape, …) and
// not the URL, withheld when it holds any secret of the URL (urlSecrets);
// an error that is no configuration error is named as a URL that does not
// parse.
func parseProblem(rawURL string, err error) string {
	const unparsable = "the URL does not parse as a PostgreSQL connection URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)"
	var pce *pgconn.ParseConfigError
	if !errors.As(err, &pce) {
		return unparsable
	}
	bare := *pce
	bare.ConnString = ""
	reason := strings.TrimPrefix(bare.Error(), "cannot parse ``: ")
	for _, secret := range urlSecrets(rawURL) {
		if strings.Contains(reason, secret) {
			return "the URL's settings are refused (the reason is withheld: it quotes the password)"
		}
	}
	return "the URL's settings are refused: " + reason
}

// connectHint is the repair for an error of connecting to or migrating
// the database as role, that the driver's text does not give, "" for
// none: a database that does not exist (SQLSTATE 3D000), a role that may
// not create the schema's tables (42501 on schema public, the default
// since PostgreSQL 15 for a role that does not own the database). Other
// refusals (42501 on a database or a table) get none: their repair
// depends on grants this process cannot see.
func connectHint(err error, role, db string) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || role == "" || db == "" {
		return ""
	}
	switch {
	case pe.Code == "3D000":
		return fmt.Sprintf("; create the database first, owned by the role the host connects as: CREATE DATABASE %s OWNER %s (or createdb -O %s %s)", QuoteIdent(db), QuoteIdent(role), role, db)
	case pe.Code == "42501" && strings.Contains(pe.Message, "for schema public"):
		return fmt.Sprintf("; the host creates its tables in schema public, which PostgreSQL 15 and later let only the database's owner do: ALTER DATABASE %s OWNER TO %s, or GRANT CREATE ON SCHEMA public TO %s in that database", QuoteIdent(db), QuoteIdent(role), QuoteIdent(role))
	}
	return ""
}
