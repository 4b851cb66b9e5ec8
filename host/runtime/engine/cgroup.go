package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits are one shard's resource ceilings (spec/runtime-v1.md §10.3):
// workerd enforces none itself. Zero fields set no limit.
type Limits struct {
	// CPUMillicores caps the shard's CPU time: 1000 is one core.
	CPUMillicores int64
	// MemoryBytes caps the shard's memory; past it the kernel's OOM
	// killer ends the process and the supervisor restarts it.
	MemoryBytes int64
}

// cgroupRoot is where the kernel's cgroup hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// cfsPeriod is the CFS period the CPU quota is a share of, in µs.
const cfsPeriod = 100000

// Cgroup is a shard's control groups (cgroup v1: one directory per
// controller), removed by Remove once its process has exited.
type Cgroup struct {
	dirs []string
}

// CgroupsV1 reports whether per-shard limits can be set here: the cgroup
// v1 cpu and memory controllers are mounted and this process may create
// groups in them (root, or a delegated hierarchy). The error says why not.
// cgroup v2 (a unified hierarchy with controllers) is not driven yet.
func CgroupsV1() error {
	for _, c := range []string{"cpu", "memory"} {
		dir := filepath.Join(cgroupRoot, c)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
			return fmt.Errorf("the cgroup v1 %s controller is not mounted at %s", c, dir)
		}
		probe := filepath.Join(dir, fmt.Sprintf("takoform-probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil {
			return fmt.Errorf("cannot create a cgroup under %s: %w", dir, err)
		}
		if err := os.Remove(probe); err != nil {
			return fmt.Errorf("cannot remove the probe cgroup %s: %w", probe, err)
		}
	}
	return nil
}

// Confine creates the cgroup v1 groups takoform-<host pid>/<name> under
// the cpu and memory controllers with l's limits and moves pid into them.
// The process runs unconfined for the moment between its start and this
// call.
func Confine(pid int, name string, l Limits) (*Cgroup, error) {
	g := &Cgroup{}
	set := func(controller string, files map[string]string) error {
		dir := filepath.Join(cgroupRoot, controller, fmt.Sprintf("takoform-%d", os.Getpid()), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		g.dirs = append(g.dirs, dir)
		for f, v := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
			}
		}
		return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	}
	if l.CPUMillicores > 0 {
		quota := l.CPUMillicores * cfsPeriod / 1000
		if err := set("cpu", map[string]string{"cpu.cfs_period_us": strconv.Itoa(cfsPeriod), "cpu.cfs_quota_us": strconv.FormatInt(quota, 10)}); err != nil {
			return g, err
		}
	}
	if l.MemoryBytes > 0 {
		if err := set("memory", map[string]string{"memory.limit_in_bytes": strconv.FormatInt(l.MemoryBytes, 10)}); err != nil {
			return g, err
		}
	}
	return g, nil
}

// Remove deletes the groups (their process must have exited), then the
// per-host parents when empty.
func (g *Cgroup) Remove() error {
	var errs []error
	for _, d := range g.dirs {
		err := os.Remove(d)
		for i := 0; err != nil && errors.Is(err, syscall.EBUSY) && i < 50; i++ {
			time.Sleep(10 * time.Millisecond) // the exited task is still being accounted
			err = os.Remove(d)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		if err := os.Remove(filepath.Dir(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
			// another shard's group is still there: the parent stays
			continue
		}
	}
	return errors.Join(errs...)
}

// SweepCgroups removes the empty groups a host that died without cleaning
// up left behind (takoform-<pid> of a process that no longer exists): its
// workerd processes died with it (Pdeathsig), their groups did not. It
// returns how many groups it removed; groups still holding a process stay.
func SweepCgroups() (int, error) {
	removed := 0
	var errs []error
	for _, c := range []string{"cpu", "memory"} {
		parents, err := filepath.Glob(filepath.Join(cgroupRoot, c, "takoform-*"))
		if err != nil {
			return removed, err
		}
		for _, parent := range parents {
			pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(parent), "takoform-"))
			if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
				continue // not ours to judge, or its host still runs
			}
			children, err := os.ReadDir(parent)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, ch := range children {
				if ch.IsDir() {
					if err := os.Remove(filepath.Join(parent, ch.Name())); err != nil {
						errs = append(errs, err)
						continue
					}
					removed++
				}
			}
			if err := os.Remove(parent); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
