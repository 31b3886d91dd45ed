package extract

import "sort"

type swapper struct {
	n    int
	less func(i, j int) bool
	swap func(i, j int)
}

func (s swapper) Len() int           { return s.n }
func (s swapper) Less(i, j int) bool { return s.less(i, j) }
func (s swapper) Swap(i, j int)      { s.swap(i, j) }

func stableSort(n int, less func(i, j int) bool, swap func(i, j int)) {
	sort.Stable(swapper{n, less, swap})
}
