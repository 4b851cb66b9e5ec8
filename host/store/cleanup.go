package store

import "errors"

// JoinCleanup runs cleanup (a deferred Close or Rollback) and joins its
// failure into *err, so a failed cleanup is reported beside the answer
// rather than lost; *err is left as it was when cleanup succeeds
// (spec/decisions/0027-no-ignored-error.md).
func JoinCleanup(err *error, cleanup func() error) {
	if cerr := cleanup(); cerr != nil {
		*err = errors.Join(*err, cerr)
	}
}
