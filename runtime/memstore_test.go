package runtime

import (
	"testing"

	"github.com/vibelife/vibe/knowledge/storetest"
)

func TestMemStoreHistory(t *testing.T) {
	storetest.RunHistory(t, NewMemStore())
}
