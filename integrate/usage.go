package integrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// ExtractUsage is the LLM usage of the extraction that wrote a skill's
// knowledge, per pass. `vibe extract` writes it (WriteExtractUsage) and
// integrate records it in meta.json as extract_llm_usage, so the usage of
// the whole build is kept with the skill.
type ExtractUsage struct {
	// Extractor is the knowledge files' meta.extractor ("llm:gpt-4o-mini").
	Extractor string `json:"extractor"`
	// Passes are in pass order (map, reduce, gap, tiers, sop).
	Passes []PassUsage `json:"passes"`
	Total  PassUsage   `json:"total"`
	// KnowledgeHashes are the hashes of the knowledge files the extraction
	// wrote, as meta.json's knowledge_hashes.
	KnowledgeHashes map[string]string `json:"knowledge_hashes"`
	// EditedAfter is set in meta.json when the knowledge files are no longer
	// those the extraction wrote (edited by hand since).
	EditedAfter bool `json:"knowledge_edited_after,omitempty"`
}

// PassUsage is what one extraction pass asked of the model.
type PassUsage struct {
	Pass string `json:"pass"`
	// Requests were sent to the endpoint; CachedHits were answered from the
	// response cache instead.
	Requests   int `json:"requests"`
	CachedHits int `json:"cached_hits"`
	// Cached is set when every answer of the pass came from the cache.
	Cached bool `json:"cached"`
	// PromptTokens and CompletionTokens are, request by request, the larger
	// of the endpoint's usage and vibe's count (llm.Usage); Cost is priced
	// from them.
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
	// EndpointPromptTokens and EndpointCompletionTokens are the usage the
	// endpoint returned; CountedLarger counts the requests recorded with
	// vibe's count because it was larger; Tokenizer names vibe's counter.
	EndpointPromptTokens     int    `json:"endpoint_prompt_tokens,omitempty"`
	EndpointCompletionTokens int    `json:"endpoint_completion_tokens,omitempty"`
	CountedLarger            int    `json:"counted_larger,omitempty"`
	Tokenizer                string `json:"tokenizer,omitempty"`
}

// Add counts p into u (the Pass name is kept).
func (u *PassUsage) Add(p PassUsage) {
	u.Requests += p.Requests
	u.CachedHits += p.CachedHits
	u.PromptTokens += p.PromptTokens
	u.CompletionTokens += p.CompletionTokens
	u.EndpointPromptTokens += p.EndpointPromptTokens
	u.EndpointCompletionTokens += p.EndpointCompletionTokens
	u.CountedLarger += p.CountedLarger
	if u.Tokenizer == "" {
		u.Tokenizer = p.Tokenizer
	}
	u.Cost += p.Cost
	u.Cached = u.Requests == 0 && u.CachedHits > 0
}

// KnowledgeHashes returns the hashes of a skill directory's knowledge files
// as meta.json records them (knowledge_hashes).
func KnowledgeHashes(skillDir string) (map[string]string, error) {
	ks, err := loadKnowledge(skillDir)
	if err != nil {
		return nil, err
	}
	return ks.hashes, nil
}

// ReadExtractUsage reads a usage record WriteExtractUsage wrote; a missing
// file is (nil, nil).
func ReadExtractUsage(path string) (*ExtractUsage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var u ExtractUsage
	if err := json.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it; the next vibe extract writes it again)", path, err)
	}
	return &u, nil
}

// WriteExtractUsage writes a usage record for integrate to read.
func WriteExtractUsage(path string, u ExtractUsage) error {
	data, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}

// extractUsageFor picks the extraction usage meta.json records: the fresh
// record, else the one meta.json holds; none when it belongs to another
// extractor than the knowledge's or asked no model. It is marked when the
// knowledge changed since the extraction wrote it.
func extractUsageFor(fresh, prev *ExtractUsage, extractor string, hashes map[string]string) *ExtractUsage {
	u := fresh
	if u == nil {
		u = prev
	}
	if u == nil || u.Extractor != extractor || len(u.Passes) == 0 {
		return nil
	}
	c := *u
	c.EditedAfter = !maps.Equal(c.KnowledgeHashes, hashes)
	return &c
}
