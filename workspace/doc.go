// Package workspace knows where everything lives in a vibe workspace and how it
// is configured.
//
// A workspace is a directory (the current one unless --workspace or
// VIBE_WORKSPACE says otherwise) laid out as:
//
//	vibe.yaml                              configuration (optional)
//	knowledge/<theme>/curate.yaml          what to gather for a theme
//	knowledge/<theme>/source/              gathered originals + sources.lock.json
//	knowledge/<theme>/converted/           one Markdown file per kept source
//	skills/<theme>/                        the built skill (SKILL.md, knowledge/, tools/, meta.json)
//	.vibe/                                 store, caches (generated, never committed)
//
// Configuration is read from vibe.yaml, then overridden by environment variables
// (VIBE_<SECTION>_<KEY>, and the standard OPENAI_API_KEY, OPENAI_BASE_URL and
// DATABASE_URL), then by command-line flags, which the commands apply.
package workspace
