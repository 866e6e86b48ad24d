package auth

import (
	"context"
	"os"
	"sync"
	"time"
)

// WatchedUsersFile is a users file that is read again when it changes
// (modification time or size, looked at no more often than every check),
// so an operator edits users without a restart. A file that no longer
// parses leaves the users as they were and is reported to OnReload.
type WatchedUsersFile struct {
	path     string
	check    time.Duration
	onReload func(error)

	mu      sync.Mutex // guards the fields below
	users   *UsersFile
	stamp   fileStamp
	checked time.Time
}

// WatchUsersFile reads path and watches it; check <= 0 is
// DefaultReloadCheck; onReload may be nil.
func WatchUsersFile(path string, check time.Duration, onReload func(error)) (*WatchedUsersFile, error) {
	if check <= 0 {
		check = DefaultReloadCheck
	}
	w := &WatchedUsersFile{path: path, check: check, onReload: onReload}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	users, err := LoadUsersFile(path)
	if err != nil {
		return nil, err
	}
	w.users, w.stamp, w.checked = users, fileStamp{mod: fi.ModTime(), size: fi.Size()}, time.Now()
	return w, nil
}

// AuthenticatePlain implements PlainAuthenticator.
func (w *WatchedUsersFile) AuthenticatePlain(ctx context.Context, user, password string) (bool, error) {
	return w.current().AuthenticatePlain(ctx, user, password)
}

func (w *WatchedUsersFile) current() *UsersFile {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.checked) < w.check {
		return w.users
	}
	w.checked = time.Now()
	fi, err := os.Stat(w.path)
	var stamp fileStamp
	if err == nil {
		stamp = fileStamp{mod: fi.ModTime(), size: fi.Size()}
		if equalStamps([]fileStamp{stamp}, []fileStamp{w.stamp}) {
			return w.users
		}
	}
	var users *UsersFile
	if err == nil {
		users, err = LoadUsersFile(w.path)
	}
	if err == nil {
		w.users, w.stamp = users, stamp
	}
	if w.onReload != nil {
		w.onReload(err)
	}
	return w.users
}
