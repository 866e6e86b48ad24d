package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot file base names; each is written as .svg and .png.
const (
	ThroughputPlot = "throughput"
	LatencyPlot    = "latency"
	VsPlot         = "vs"
)

// WritePlots draws the run's plots into dir: throughput over time, the
// latency percentile curves, and with two targets the side-by-side bars.
func WritePlots(dir string, res *Results) error {
	tp, err := throughputPlot(res)
	if err != nil {
		return err
	}
	if err := render(dir, ThroughputPlot, 22*vg.Centimeter, 12*vg.Centimeter, single(tp)); err != nil {
		return err
	}
	lp, err := latencyPlot(res)
	if err != nil {
		return err
	}
	if err := render(dir, LatencyPlot, 22*vg.Centimeter, 12*vg.Centimeter, single(lp)); err != nil {
		return err
	}
	if len(res.Targets) < 2 {
		return nil
	}
	rates, lats, err := vsPlots(res)
	if err != nil {
		return err
	}
	return render(dir, VsPlot, 26*vg.Centimeter, 11*vg.Centimeter, func(dc draw.Canvas) {
		ps := [][]*plot.Plot{{rates, lats}}
		cs := plot.Align(ps, draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter}, dc)
		rates.Draw(cs[0][0])
		lats.Draw(cs[0][1])
	})
}

func single(p *plot.Plot) func(draw.Canvas) { return func(dc draw.Canvas) { p.Draw(dc) } }

// render draws into an SVG and a PNG file named base in dir.
func render(dir, base string, w, h vg.Length, draw1 func(draw.Canvas)) error {
	svg := vgsvg.New(w, h)
	draw1(draw.New(svg))
	if err := writeFile(filepath.Join(dir, base+".svg"), svg); err != nil {
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	draw1(draw.New(img))
	return writeFile(filepath.Join(dir, base+".png"), vgimg.PngCanvas{Canvas: img})
}

func writeFile(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: plot: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("bench: plot %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: plot: %w", err)
	}
	return nil
}

// throughputPlot draws produce and consume MB/s over time per target.
func throughputPlot(res *Results) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: throughput over time (loopback ceiling %.0f MB/s)", res.Workload.Name, res.Loopback.MBPerSec)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "MB/s (record values)"
	p.Add(plotter.NewGrid())
	var lines []any
	for _, t := range res.Targets {
		prod, cons := make(plotter.XYs, len(t.Timeline)), make(plotter.XYs, len(t.Timeline))
		for i, pt := range t.Timeline {
			prod[i] = plotter.XY{X: pt.Seconds, Y: pt.ProduceMBPerSec}
			cons[i] = plotter.XY{X: pt.Seconds, Y: pt.ConsumeMBPerSec}
		}
		lines = append(lines, t.Target+" produce", prod, t.Target+" consume", cons)
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return nil, fmt.Errorf("bench: throughput plot: %w", err)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	return p, nil
}

// latencyPlot draws the percentile curves (produce-ack and end-to-end) per
// target, the x axis spread by nines.
func latencyPlot(res *Results) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = res.Workload.Name + ": latency by percentile"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "ms"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.X.Tick.Marker = nineTicks{}
	p.Add(plotter.NewGrid())
	var lines []any
	for _, t := range res.Targets {
		if c := curve(t.ProduceAck); len(c) > 0 {
			lines = append(lines, t.Target+" produce-ack", c)
		}
		e2e := " end-to-end"
		if t.Transactions != nil {
			e2e += " read_committed"
			if c := curve(t.Transactions.ReadUncommitted); len(c) > 0 {
				lines = append(lines, t.Target+" end-to-end read_uncommitted", c)
			}
		}
		if c := curve(t.EndToEnd); len(c) > 0 {
			lines = append(lines, t.Target+e2e, c)
		}
	}
	if len(lines) == 0 {
		// No latency recorded (nothing steady-state): an empty frame
		// still says so.
		p.Title.Text += " (no samples)"
		p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		return p, nil
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return nil, fmt.Errorf("bench: latency plot: %w", err)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// curve maps a percentile curve to x = nines (-log10(1-p)), y = ms > 0.
func curve(l Latency) plotter.XYs {
	xy := make(plotter.XYs, 0, len(l.Curve))
	for _, c := range l.Curve {
		xy = append(xy, plotter.XY{X: nines(c.Percentile), Y: math.Max(c.Ms, 0.001)})
	}
	return xy
}

func nines(pct float64) float64 { return -math.Log10(1 - min(pct, 99.9999)/100) }

// nineTicks labels the nines axis with the percentiles.
type nineTicks struct{}

func (nineTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for i, label := range []string{"0", "90", "99", "99.9", "99.99", "99.999"} {
		if x := float64(i); x >= lo && x <= hi {
			ts = append(ts, plot.Tick{Value: x, Label: label})
		}
	}
	return ts
}

// vsPlots draws the targets' throughput and latency side by side.
func vsPlots(res *Results) (rates, lats *plot.Plot, err error) {
	rates, lats = plot.New(), plot.New()
	rates.Title.Text, rates.Y.Label.Text = "throughput (higher is better)", "MB/s"
	lats.Title.Text, lats.Y.Label.Text = "latency (lower is better)", "ms"
	rates.NominalX("produce", "consume")
	lats.NominalX("ack p50", "ack p99", "e2e p50", "e2e p99")
	w := vg.Points(18)
	for i, t := range res.Targets {
		rb, err := plotter.NewBarChart(plotter.Values{t.Produce.MBPerSec, t.Consume.MBPerSec}, w)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: vs plot: %w", err)
		}
		lb, err := plotter.NewBarChart(plotter.Values{t.ProduceAck.P50Ms, t.ProduceAck.P99Ms, t.EndToEnd.P50Ms, t.EndToEnd.P99Ms}, w)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: vs plot: %w", err)
		}
		for _, b := range []*plotter.BarChart{rb, lb} {
			b.Color = plotutil.Color(i)
			b.LineStyle.Width = 0
			b.Offset = vg.Length(2*i-len(res.Targets)+1) * w / 2
		}
		rates.Add(rb)
		lats.Add(lb)
		rates.Legend.Add(t.Target, rb)
		lats.Legend.Add(t.Target, lb)
	}
	// Headroom above the tallest bar keeps the legend off the bars.
	rates.Y.Min, lats.Y.Min = 0, 0
	rates.Y.Max *= 1.3
	lats.Y.Max *= 1.3
	rates.Legend.Top, lats.Legend.Top = true, true
	return rates, lats, nil
}
