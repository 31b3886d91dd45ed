package extract

import "testing"

func TestSOPStepsNameOnlyToolsThatRun(t *testing.T) {
	x := &llmRun{opt: Options{ComputeTools: []string{"calc_brew"}, DeclaredTools: []string{"calc_brew", "tasting_notes", "collect_setup"}}}
	for name, want := range map[string]bool{
		"collect_info": true, "get_rules": true, "calc_brew": true, "tasting_notes": true, "collect_setup": true,
		"show_chart": true, "search_classics": true,
		"calculate_bazi": false, "collect_birth": false, "start_questionnaire": false,
	} {
		if got := x.runnableTool(name); got != want {
			t.Errorf("runnableTool(%s) = %v, want %v", name, got, want)
		}
	}
}
