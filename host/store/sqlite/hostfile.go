package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// OpenHostFile opens the host data file at path read-only (a busy timeout
// of 10 s, the path escaped for SQLite's file: URI, so a name with '#' or
// '?' opens that file) for the tools that read a host's file without
// serving it: `takoform host backup` and `takoform host copy`. It never
// creates or writes the file; it refuses one that is missing, is not a
// SQLite database, or is not a Takoform host database (no schema version
// table: an empty file, another program's database). Errors name the path.
func OpenHostFile(ctx context.Context, path string) (_ *sql.DB, err error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("the data file %s: %w", path, err)
	} else if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give the data file in it that `takoform host serve --data` serves", path)
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(path)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, db.Close())
		}
	}()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'goose_db_version'`).Scan(&tables); err != nil {
		return nil, fmt.Errorf("%s is not a SQLite database: %w", path, err)
	}
	if tables == 0 {
		return nil, fmt.Errorf("%s is not a Takoform host database (it has no schema version table); give the file `takoform host serve --data` serves", path)
	}
	return db, nil
}
