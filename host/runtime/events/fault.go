package events

import (
	"fmt"
	"os"
	"time"
)

// KillAfterRecordEnv names the test-only fault hook of repo decision
// 0064: when the environment variable is "1" at the start of the
// process, the process SIGKILLs itself right after it has recorded a
// cron firing (store.FiringRecorded committed) and before it moves it to
// dispatching: the crash between the two writes that spec/runtime-v1.md
// §2.5 rule 4 and repo decision 0060 rule 2 speak of, for a fault test
// to cause on a real `host serve` process (internal/replicatest). It is
// not an operator setting: a host started with it dies at its first
// firing.
const KillAfterRecordEnv = "TAKOFORM_TEST_EVENTS_KILL_AFTER_RECORD"

// killAfterRecord is KillAfterRecordEnv, read once.
var killAfterRecord = os.Getenv(KillAfterRecordEnv) == "1"

// afterRecord runs the fault hook, if set, after this process recorded
// trigger's firing of minute.
func afterRecord(trigger string, minute time.Time) {
	if !killAfterRecord {
		return
	}
	// Said on stderr first, so the test's log shows where the process died.
	fmt.Fprintf(os.Stderr, "events: %s=1: SIGKILL after recording trigger %s's firing of %s, before its dispatch\n",
		KillAfterRecordEnv, trigger, minute.Format(time.RFC3339))
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Kill()
	}
	if err != nil {
		panic(fmt.Sprintf("events: %s: the process could not kill itself: %v", KillAfterRecordEnv, err))
	}
	select {} // the signal ends the process; nothing after the record runs
}
