package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/takoform/takoform/host/store"
)

const crashEnv = "TAKOFORM_SQLITE_CRASH_DB"

// TestCrashKeepsAcknowledged kills (SIGKILL) a process in the middle of
// concurrent creates, several times over the same file, and checks that
// every create it acknowledged is in the file: acknowledged means durable.
// A killed process leaves its writes in the OS page cache, so this checks
// that no answer precedes its commit; that a commit reaches the disk is
// synchronous=FULL's part, which Open checks.
func TestCrashKeepsAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "host.db")
	var acked []string
	const kills = 10
	for range kills {
		acked = append(acked, crashChild(t, path)...)
	}
	s := openTest(t, path, Options{})
	var stored int
	err := s.View(t.Context(), func(tx store.Tx) error {
		for _, uid := range acked {
			if _, err := tx.ResourceByUID(uid); err != nil {
				return fmt.Errorf("acknowledged create %s lost: %w", uid, err)
			}
		}
		for i := 1; ; i++ { // UIDs are dense: uid-1, uid-2, …
			if _, err := tx.ResourceByUID(fmt.Sprintf("uid-%d", i)); err != nil {
				stored = i - 1
				return nil
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills after %d acknowledged creates in all; %d stored", kills, len(acked), stored)
}

// crashChild runs TestHelperProcess on path, kills it at a random moment
// 50–150 ms after its first acknowledgement (so the kill falls anywhere in
// a batch's run or commit) and returns every UID it acknowledged.
func crashChild(t *testing.T, path string) []string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if uid, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked = append(acked, uid)
		}
		if len(acked) == 1 {
			delay := 50*time.Millisecond + rand.N(100*time.Millisecond)
			time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
		}
	}
	err = cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	return acked
}

// TestHelperProcess is the child of TestCrashKeepsAcknowledged: 32
// goroutines create resources and print "ack <uid>" once Update returns,
// until the parent kills the process.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("runs only as the child of TestCrashKeepsAcknowledged")
	}
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	deadline := time.Now().Add(time.Minute) // the parent kills us long before
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				var uid string
				err := s.Update(context.Background(), func(tx store.Tx) error {
					n, err := tx.Next("uid")
					if err != nil {
						return err
					}
					uid = fmt.Sprintf("uid-%d", n)
					return tx.CreateResource(testResource(uid, uid))
				})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %s\n", uid) // one write(2): atomic on a pipe
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	os.Exit(3)
}
