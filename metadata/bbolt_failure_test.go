package metadata

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// openBoltFile is OpenBolt that also returns the bbolt file's handle, so a
// test can make the disk under it fail.
func openBoltFile(t *testing.T) (*Bolt, *os.File) {
	var file *os.File
	db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), 0o600, &bolt.Options{
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket(boltKV); err != nil {
			return err
		}
		_, err := tx.CreateBucket(boltMeta)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return &Bolt{db: db, failure: newBoltFailure()}, file
}

// TestBoltFailedCommitIsSticky: a commit the disk refuses (here: writes to
// a closed file) fails the store for good and says so (Failed, Failure,
// ErrStorageFailed); every later write is refused without trying. A lost
// compare-and-swap is not such a failure.
func TestBoltFailedCommitIsSticky(t *testing.T) {
	b, file := openBoltFile(t)
	ctx := context.Background()
	if _, err := b.Txn(ctx, nil, []Op{Put("a", []byte("1"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Txn(ctx, []Cond{{Key: "a"}}, []Op{Put("a", []byte("2"))}); !IsConflict(err) {
		t.Fatalf("lost compare-and-swap: %v, want ErrConflict", err)
	}
	if err := b.Failure(); err != nil {
		t.Fatalf("Failure after a conflict: %v", err)
	}
	file.Close() // the commit's writes and fdatasync now fail, as on a failing disk
	if _, err := b.Txn(ctx, nil, []Op{Put("b", []byte("1"))}); !errors.Is(err, ErrStorageFailed) {
		t.Fatalf("commit to a failing file: %v, want ErrStorageFailed", err)
	}
	select {
	case <-b.Failed():
	default:
		t.Fatal("Failed not closed after a failed commit")
	}
	first := b.Failure()
	if !errors.Is(first, ErrStorageFailed) {
		t.Fatalf("Failure = %v", first)
	}
	if _, err := b.Txn(ctx, nil, []Op{Put("c", []byte("1"))}); err != first {
		t.Fatalf("write after the failure: %v, want the first failure %v", err, first)
	}
	b.Close() // fails on the closed file; it must not panic
}
