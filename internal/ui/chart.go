package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ChartPoint is one backup on a folder's history chart.
type ChartPoint struct {
	Name string
	Size int64
	At   time.Time
}

// MaxChartPoints bounds the marks of a chart: the newest backups of the
// folder, so a folder of thousands keeps a small page.
const MaxChartPoints = 120

// The chart's drawing area, in the SVG's own units (viewBox): the page's
// stylesheet scales it to the width it has, a phone's included.
const (
	chartW, chartH          = 400.0, 150.0
	chartLeft, chartRight   = 8.0, 392.0
	chartTop, chartBottom   = 22.0, 128.0
	chartLabelY, chartTextX = 144.0, 8.0
)

// Chart is a folder's history drawn as SVG by the server: size against
// date, one mark per backup, with the same facts in words (Summary) for
// those who cannot see it. Everything in it is plain text or numbers that
// the template escapes.
type Chart struct {
	// ViewBox is the SVG's viewBox attribute.
	ViewBox string
	// Line is the polyline's points, oldest first.
	Line string
	// Marks are the backups, oldest first.
	Marks []ChartMark
	// Base is the y of the zero line; Left and Right its ends.
	Base, Left, Right string
	// MaxLabel names the largest size (the top of the scale), at
	// MaxLabelX, MaxLabelY; FromLabel and ToLabel the first and last
	// dates under the chart, at LabelY, ToX.
	MaxLabel, FromLabel, ToLabel  string
	TextX, MaxLabelY, LabelY, ToX string
	// Summary says in words what the chart shows.
	Summary string
	// Shown is how many backups the chart shows of Total.
	Shown, Total int
}

// ChartMark is one backup's mark: its centre and what it says on hover
// (an SVG title, read by screen readers too).
type ChartMark struct {
	X, Y   string
	Title  string
	Shrunk bool // the newest, when the folder shrank
}

// NewChart draws points (newest first, as a folder lists them; at most
// MaxChartPoints are drawn, the newest) out of total backups; shrunk marks
// the newest. It returns nil when there is nothing to draw.
func NewChart(points []ChartPoint, total int, shrunk bool) *Chart {
	if len(points) == 0 {
		return nil
	}
	if len(points) > MaxChartPoints {
		points = points[:MaxChartPoints]
	}
	// Oldest first, left to right.
	pts := make([]ChartPoint, len(points))
	for i, p := range points {
		pts[len(points)-1-i] = p
	}
	first, last := pts[0].At, pts[len(pts)-1].At
	var maxSize int64
	smallest, largest := pts[0], pts[0]
	for _, p := range pts {
		maxSize = max(maxSize, p.Size)
		if p.Size < smallest.Size {
			smallest = p
		}
		if p.Size > largest.Size {
			largest = p
		}
	}
	span := last.Sub(first)
	c := &Chart{
		ViewBox: "0 0 " + num(chartW) + " " + num(chartH),
		Base:    num(chartBottom), Left: num(chartLeft), Right: num(chartRight),
		MaxLabel: HumanSize(maxSize), FromLabel: day(first), ToLabel: day(last),
		TextX: num(chartTextX), MaxLabelY: num(chartTop - 8), LabelY: num(chartLabelY), ToX: num(chartRight),
		Shown: len(pts), Total: max(total, len(pts)),
	}
	var line strings.Builder
	for i, p := range pts {
		x := (chartLeft + chartRight) / 2
		if span > 0 {
			x = chartLeft + (chartRight-chartLeft)*float64(p.At.Sub(first))/float64(span)
		}
		y := chartBottom
		if maxSize > 0 {
			y = chartBottom - (chartBottom-chartTop)*float64(p.Size)/float64(maxSize)
		}
		if i > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(num(x) + "," + num(y))
		c.Marks = append(c.Marks, ChartMark{X: num(x), Y: num(y),
			Title:  p.Name + ": " + HumanSize(p.Size) + ", " + p.At.UTC().Format("2006-01-02 15:04 UTC"),
			Shrunk: shrunk && i == len(pts)-1})
	}
	c.Line = line.String()
	newest := pts[len(pts)-1]
	var s strings.Builder
	if c.Shown < c.Total {
		fmt.Fprintf(&s, "The newest %d of %d backups", c.Shown, c.Total)
	} else if c.Shown == 1 {
		s.WriteString("1 backup")
	} else {
		fmt.Fprintf(&s, "%d backups", c.Shown)
	}
	if c.Shown > 1 {
		fmt.Fprintf(&s, ", from %s to %s: the smallest %s (%s), the largest %s (%s)",
			day(first), day(last), HumanSize(smallest.Size), smallest.Name, HumanSize(largest.Size), largest.Name)
	}
	fmt.Fprintf(&s, ". The newest, %s of %s, is %s", newest.Name, newest.At.UTC().Format("2006-01-02 15:04 UTC"), HumanSize(newest.Size))
	if shrunk {
		s.WriteString(", much smaller than those before it")
	}
	s.WriteByte('.')
	c.Summary = s.String()
	return c
}

// num writes a coordinate with one decimal at most.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// day writes t's date in UTC.
func day(t time.Time) string { return t.UTC().Format("2006-01-02") }
