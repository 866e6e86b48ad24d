package wal

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// segment is one segment file. start and path are immutable; the file
// handle is used for reads by anyone and for writes only by the flusher
// (or by Open before the flusher starts).
type segment struct {
	start   Pos
	path    string
	f       File
	version byte // format version from the header; set once by create or scan
}

// name is the segment's file name, for messages.
func (s *segment) name() string { return filepath.Base(s.path) }

// syncer fsyncs files and directories, timing each call and logging the
// slow ones.
type syncer struct {
	fs   FS
	dir  string
	slow time.Duration
	log  *slog.Logger
}

// syncFile fsyncs f and returns how long it took.
func (s syncer) syncFile(f File, path string) (time.Duration, error) {
	begin := time.Now()
	err := f.Sync()
	d := time.Since(begin)
	s.report("file", path, d)
	if err != nil {
		return d, fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	return d, nil
}

// syncDir fsyncs the log directory.
func (s syncer) syncDir() error {
	begin := time.Now()
	err := s.fs.SyncDir(s.dir)
	s.report("dir", s.dir, time.Since(begin))
	if err != nil {
		return fmt.Errorf("wal: fsync directory %s: %w", s.dir, err)
	}
	return nil
}

func (s syncer) report(kind, path string, d time.Duration) {
	if d > s.slow {
		s.log.Warn("wal: slow fsync", "kind", kind, "path", path, "duration", d)
	}
}

// createSegment makes a durable, empty segment starting at start: header
// into "<name>.tmp", fsync, rename, fsync the directory. The returned
// handle is open for appending.
func (s syncer) createSegment(start Pos) (*segment, error) {
	path := filepath.Join(s.dir, segmentName(start))
	tmp := path + tmpExt
	f, err := s.fs.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("wal: create segment %s: %w", tmp, err)
	}
	if err := s.initSegment(f, tmp, path, start); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &segment{start: start, path: path, f: f, version: formatVersion}, nil
}

func (s syncer) initSegment(f File, tmp, path string, start Pos) error {
	if _, err := f.Write(appendSegmentHeader(nil, start)); err != nil {
		return fmt.Errorf("wal: write segment header %s: %w", tmp, err)
	}
	if _, err := s.syncFile(f, tmp); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("wal: rename %s: %w", tmp, err)
	}
	return s.syncDir()
}

// removeSegment deletes a segment file durably.
func (s syncer) removeSegment(path string) error {
	if err := s.fs.Remove(path); err != nil {
		return fmt.Errorf("wal: remove segment %s: %w", path, err)
	}
	return s.syncDir()
}
