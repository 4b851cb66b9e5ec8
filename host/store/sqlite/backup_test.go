package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/takoform/takoform/host/store"
)

// TestBackupWhileWriting: a backup taken while Updates commit holds every
// resource committed before it started, opens as a store, and is 0600; an
// existing output and a missing source are refused without writing.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "host.db")
	s := openTest(t, src, Options{})
	ctx := context.Background()
	for i := range 50 {
		if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateResource(testResource(name(i), "uid-"+name(i))) }); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	writing := make(chan error, 1)
	go func() {
		for i := 50; ; i++ {
			select {
			case <-stop:
				writing <- nil
				return
			default:
			}
			if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateResource(testResource(name(i), "uid-"+name(i))) }); err != nil {
				writing <- err
				return
			}
		}
	}()
	out := filepath.Join(dir, "backup.db")
	err := Backup(ctx, src, out)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writing; err != nil {
		t.Fatalf("a write during the backup: %v", err)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi, err)
	}
	b := openTest(t, out, Options{})
	err = b.View(ctx, func(tx store.Tx) error {
		for i := range 50 {
			if _, err := tx.ResourceByUID("uid-" + name(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the restored copy lacks a resource committed before the backup: %v", err)
	}
	if err := Backup(ctx, src, out); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}
	if err := Backup(ctx, filepath.Join(dir, "absent.db"), filepath.Join(dir, "x.db")); err == nil {
		t.Fatal("backup of a missing file succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); err == nil {
		t.Fatal("backup of a missing file created it")
	}
}

func name(i int) string { return fmt.Sprintf("r%04d", i) }
