//go:build !linux && !darwin

package localfs

import "os"

// getETagAttr reports no recorded ETag: this platform's extended attributes
// are not used, so ETags are recomputed from content.
func getETagAttr(*os.File) (string, bool) { return "", false }

// setETagAttr does nothing on this platform.
func setETagAttr(*os.File, string) {}
