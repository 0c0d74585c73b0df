package plots

// Point is one measured point of a sweep: Failures out of Trials runs of
// Variant at fault probability X, with the failure Rate and its 95% Wilson
// score interval [Lo, Hi] (all three in [0, 1]).
type Point struct {
	X        float64
	Variant  string
	Failures int
	Trials   int
	Rate     float64
	Lo       float64
	Hi       float64
}

// Sweep is a measured experiment: its points in variant order, then x order,
// with the titles a chart of it uses. XLabel and YLabel name the quantities
// without units; the chart adds the unit (%).
type Sweep struct {
	Name   string
	Title  string
	XLabel string
	YLabel string
	// Labels maps a variant name to its legend label; a variant missing here
	// is labelled by its name.
	Labels map[string]string
	Points []Point
	// Replays holds, per variant that failed at least once (in variant
	// order), its first failing trial: at the lowest x where it failed, the
	// lowest trial number there.
	Replays []Replay
}

// Replay is one failing trial of a series, with the plan file that runs it
// again ("simrun replay FILE").
type Replay struct {
	Variant string
	X       float64
	Trial   int    // trial number at X
	Seed    uint64 // the trial's seed
	Plan    string // the plan file's text; "" if the experiment has no ReplayFunc
}

// ReplayFile is the name Write gives the replay plan of a variant of the
// sweep called name: NAME.VARIANT.plan.
func ReplayFile(name, variant string) string {
	return name + "." + variant + ".plan"
}

// Variants returns the variant names of the sweep in first-seen order.
func (s Sweep) Variants() []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range s.Points {
		if !seen[p.Variant] {
			seen[p.Variant] = true
			names = append(names, p.Variant)
		}
	}
	return names
}

// Series returns the points of one variant, in sweep order.
func (s Sweep) Series(variant string) []Point {
	var pts []Point
	for _, p := range s.Points {
		if p.Variant == variant {
			pts = append(pts, p)
		}
	}
	return pts
}

// label returns the legend label of a variant.
func (s Sweep) label(variant string) string {
	if l, ok := s.Labels[variant]; ok && l != "" {
		return l
	}
	return variant
}
