package wal

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func TestSegmentNames(t *testing.T) {
	t.Parallel()
	if got := segmentName(67108864); got != "00000000000067108864.wal" {
		t.Fatalf("segmentName: %q", got)
	}
	for name, want := range map[string]bool{
		"00000000000067108864.wal":     true,
		"18446744073709551615.wal":     true,
		"18446744073709551616.wal":     false, // overflows uint64
		"0000000000006710886.wal":      false,
		"0000000000006710886x.wal":     false,
		"00000000000067108864.wal.tmp": false,
		"00000000000067108864.log":     false,
	} {
		start, ok := parseSegmentName(name)
		if ok != want || (ok && segmentName(start) != name) {
			t.Errorf("parseSegmentName(%q) = %d, %v", name, start, ok)
		}
	}
}

// TestWireFormat pins the frozen bytes: a change here is a format change.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	hdr := appendSegmentHeader(nil, 4096)
	if got := hex.EncodeToString(hdr); got != "5344574c020000000000000000001000" {
		t.Fatalf("segment header: %s", got)
	}
	if reason := checkSegmentHeader(hdr, 4096); reason != "" {
		t.Fatal(reason)
	}
	for _, bad := range []Pos{0, 4097} {
		if checkSegmentHeader(hdr, bad) == "" {
			t.Fatalf("header for 4096 accepted as %d", bad)
		}
	}
	// Length 3, CRC-32C (Castagnoli) of 0x01 "abc", type 1, "abc".
	fr := encodeFrame(1, []byte("abc"))
	if got := hex.EncodeToString(fr); got != "00000003"+"c30d7db2"+"01616263" {
		t.Fatalf("frame: %s", got)
	}
	h := parseFrameHeader(fr)
	if h.length != 3 || h.typ != 1 || h.check(fr[frameHeaderSize:]) != "" {
		t.Fatalf("decoded header %+v", h)
	}
	if !bytes.Equal(encodeFrame(h.typ, fr[frameHeaderSize:]), fr) {
		t.Fatal("frame does not round-trip")
	}
	// The commit of the flush [4096, 4200), at 4200: length 16, CRC,
	// type 0, start and own position.
	c := commitFrame(4096, 4200)
	want := "00000010" + hex.EncodeToString(c[4:8]) + "00" + "0000000000001000" + "0000000000001068"
	if got := hex.EncodeToString(c); got != want || frameCRC(0, c[9:]) != parseFrameHeader(c).crc {
		t.Fatalf("commit frame: %s", got)
	}
	if !commitAt(c, 4200) || commitAt(c, 4201) {
		t.Fatal("commit frame not recognised at its own position only")
	}
}

func TestCorruptionErrorMessage(t *testing.T) {
	t.Parallel()
	err := &CorruptionError{File: "00000000000000004096.wal", Offset: 4096, Reason: "bad CRC"}
	want := "wal: corrupt frame in segment 00000000000000004096.wal at offset 4096: bad CRC"
	if err.Error() != want {
		t.Fatalf("got %q", err.Error())
	}
}
