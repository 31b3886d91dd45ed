package pgvector

import (
	"testing"

	"github.com/vibelife/vibe/knowledge/storetest"
)

func TestMemory(t *testing.T) {
	storetest.RunMemory(t, openFreshURL(t, testURL(t)))
}

func TestHistory(t *testing.T) {
	storetest.RunHistory(t, openFreshURL(t, testURL(t)))
}
