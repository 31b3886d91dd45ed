package runtime

import (
	"testing"

	"github.com/vibelife/vibe/knowledge/storetest"
)

// TestMemStoreContract runs the stores' shared memory suite on MemStore.
func TestMemStoreContract(t *testing.T) { storetest.RunMemory(t, NewMemStore()) }

// TestMemStoreProfileUpdates: concurrent UpdateProfile calls all land.
func TestMemStoreProfileUpdates(t *testing.T) { storetest.RunProfileUpdates(t, NewMemStore()) }

func TestMemStoreHistory(t *testing.T) {
	storetest.RunHistory(t, NewMemStore())
}

func TestMemStoreFeedback(t *testing.T) { storetest.RunFeedback(t, NewMemStore()) }
