package toolkit

import (
	"strings"
	"testing"

	"parley/agentcore"
)

// A task id from the model that Parley would not accept from outside
// (quotes, markup, line separators, spaces, 10 KB) is re-issued the way a
// missing id is: from the task's content, or the previous task's id.
func TestAssignTaskIDsReissuesInvalid(t *testing.T) {
	hostile := []string{
		`a');alert(1);('`, `a"b`, `a\b`, `</script><script>alert(1)</script>`, "a\u2028b",
		"a`b", "${alert(1)}", "a b", strings.Repeat("x", 10<<10),
	}
	for _, bad := range hostile {
		tasks := []taskInput{
			{ID: bad, Content: "Fix the bug", Status: TaskPending, ActiveForm: "Fixing the bug"},
			{ID: bad, Content: "Ship", Status: TaskPending, ActiveForm: "Shipping"},
			{ID: "keep_me", Content: "Keep", Status: TaskPending, ActiveForm: "Keeping"},
		}
		got := assignTaskIDs(tasks, []Task{task("t_ship", "Ship", TaskPending), task(bad, "Keep", TaskPending)})
		if want := []string{"task_fix_the_bug", "t_ship", "keep_me"}; strings.Join(ids(got), " ") != strings.Join(want, " ") {
			t.Errorf("id %.40q: ids = %.80q, want %q", bad, ids(got), want)
		}
		if tasks[0].ID != bad {
			t.Fatalf("assignTaskIDs changed its input")
		}
		got = assignTaskIDs([]taskInput{{Content: "Keep", Status: TaskPending, ActiveForm: "Keeping"}}, []Task{task(bad, "Keep", TaskPending)})
		if len(got) != 1 || !agentcore.ValidID(got[0].ID) {
			t.Errorf("a previous task's id %.40q was reused: %.40q", bad, got[0].ID)
		}
	}
}
