package localfs

import "testing"

func TestSegmentEncoding(t *testing.T) {
	for _, seg := range []string{"a", "%", "%25", "50%", "a%2", ".hidden", "...", "x y", "é"} {
		name := encodeSegment(seg)
		if got, ok := decodeName(name); !ok || got != seg {
			t.Errorf("decodeName(encodeSegment(%q) = %q) = %q, %v", seg, name, got, ok)
		}
		if _, ok := decodeName(name + dirMark); ok {
			t.Errorf("%q decodes as a segment, so a file and a directory could share a name", name+dirMark)
		}
	}
	for _, name := range []string{stagingName, "a%", "a%2", "%", "", ".", "..", "a%zz"} {
		if seg, ok := decodeName(name); ok {
			t.Errorf("decodeName(%q) = %q, true; want it rejected", name, seg)
		}
	}
}
