package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// JournalName is the name, inside source/, of the journal of copies a run
// is about to make. It is hidden, so convert and the hand-placed scan skip
// it.
const JournalName = ".curate-journal.json"

// journal records, before curate copies a file into source/, which origin
// the copy belongs to. A run killed between the copy and the lock leaves it
// behind; the next run reads it and treats those files as curate's own
// copies, not as files the user put there by hand (which would be gathered
// again as *-2.* and moved to .dropped/, changing the build for good).
type journal struct {
	Version int           `json:"version"`
	Copies  []journalCopy `json:"copies"`
}

type journalCopy struct {
	Origin string `json:"origin"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

func readJournal(path string) (journal, error) {
	var j journal
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return j, fmt.Errorf("curate: read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &j); err != nil {
		// A journal is only ever replaced atomically, so a bad one was not
		// written by curate; ignoring it loses nothing the lock does not
		// know, and the sha256 adoption still recognises leftover copies.
		return journal{}, nil
	}
	return j, nil
}

// add records a copy and writes the journal before the copy is made.
func (j *journal) add(path string, c journalCopy) error {
	for _, o := range j.Copies {
		if o == c {
			return nil
		}
	}
	j.Version = 1
	j.Copies = append(j.Copies, c)
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}
