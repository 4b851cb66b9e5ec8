package store

import (
	"errors"
	"testing"
)

func TestJoinCleanup(t *testing.T) {
	answer, closing := errors.New("answer"), errors.New("close")
	ok := func() error { return nil }
	fails := func() error { return closing }

	var err error
	JoinCleanup(&err, ok)
	if err != nil {
		t.Fatalf("both succeeded: %v", err)
	}
	err = answer
	JoinCleanup(&err, ok)
	if err != answer {
		t.Fatalf("a successful cleanup changed the answer: %v", err)
	}
	err = nil
	JoinCleanup(&err, fails)
	if !errors.Is(err, closing) {
		t.Fatalf("a failed cleanup was lost: %v", err)
	}
	err = answer
	JoinCleanup(&err, fails)
	if !errors.Is(err, answer) || !errors.Is(err, closing) {
		t.Fatalf("want both the answer and the cleanup failure: %v", err)
	}
}
