package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// User is the unprivileged identity a shard's workerd runs as when the
// host runs as root (spec/runtime-v1.md §10.4): its own uid and gid, no
// supplementary groups. Nil runs workerd as the host's own user.
type User struct{ UID, GID uint32 }

// credential is u as the process credential exec gives the child.
func (u *User) credential() *syscall.Credential {
	if u == nil {
		return nil
	}
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
}

// Own gives every file and directory under dir (dir included) to u, so
// its workerd can read its config and modules and bind its sockets
// there; a nil u changes nothing.
func (u *User) Own(dir string) error {
	if u == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.UID), int(u.GID))
	})
}

// ReachableByOthers says why a user other than the owner could not run
// bin from under dir: every directory above bin and dir must be
// searchable by others (o+x) and bin executable by others; nil when both
// hold. A shard under its own uid needs that much of the host's files.
func ReachableByOthers(bin, dir string) error {
	check := func(p string, want fs.FileMode) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&want != want {
			return fmt.Errorf("%s is mode %v: others need %v", p, fi.Mode().Perm(), want)
		}
		return nil
	}
	for _, target := range []string{bin, dir} {
		abs, err := filepath.Abs(target)
		if err != nil {
			return err
		}
		for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
			if err := check(p, 0o001); err != nil {
				return err
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return check(bin, 0o005)
}
