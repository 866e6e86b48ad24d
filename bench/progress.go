package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress draws the live rate of a round on stderr: a redrawn bar on a
// terminal, a plain line every few seconds otherwise (logs, CI).
type progress struct {
	out   io.Writer
	tty   bool
	every time.Duration

	done chan struct{}
	wg   sync.WaitGroup
}

// newProgress writes to out; nil out draws nothing.
func newProgress(out io.Writer) *progress {
	p := &progress{out: out, every: 5 * time.Second}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.every = true, 500*time.Millisecond
	}
	return p
}

func (p *progress) begin(label string, w *Workload, c *counters, start time.Time) {
	if p == nil || p.out == nil {
		return
	}
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		var lastP, lastC int64
		lastAt := start
		for {
			select {
			case <-p.done:
				return
			case now := <-tick.C:
				dt := now.Sub(lastAt).Seconds()
				pb, cb := c.producedBytes.Load(), c.consumedBytes.Load()
				p.draw(label, w, c, now.Sub(start), float64(pb-lastP)/dt/1e6, float64(cb-lastC)/dt/1e6)
				lastP, lastC, lastAt = pb, cb, now
			}
		}
	}()
}

func (p *progress) draw(label string, w *Workload, c *counters, elapsed time.Duration, prodMB, consMB float64) {
	line := fmt.Sprintf("%s %6.1fs %s produced %d (%.1f MB/s) consumed %d (%.1f MB/s)",
		label, elapsed.Seconds(), bar(fraction(w, c, elapsed), 20),
		c.produced.Load(), prodMB, c.consumed.Load(), consMB)
	if p.tty {
		fmt.Fprintf(p.out, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.out, line)
	}
}

func (p *progress) end() {
	if p == nil || p.out == nil || p.done == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
	p.done = nil
	if p.tty {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

// fraction estimates how far a round is: by time, by count or by backlog
// bytes, whichever the workload ends on.
func fraction(w *Workload, c *counters, elapsed time.Duration) float64 {
	switch {
	case w.BacklogBytes > 0:
		total := float64(w.BacklogBytes)
		return (float64(c.producedBytes.Load()) + float64(c.consumedBytes.Load())) / (2 * total)
	case w.Count > 0:
		return float64(c.produced.Load()) / float64(w.Count)
	case w.Duration > 0:
		return elapsed.Seconds() / w.Duration.Seconds()
	}
	return 0
}

func bar(f float64, width int) string {
	f = min(max(f, 0), 1)
	n := int(f * float64(width))
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + fmt.Sprintf("] %3.0f%%", 100*f)
}
