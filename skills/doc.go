// Package skills loads the skills the agent runtime serves, with progressive
// disclosure: tier 1 is every skill's front matter (name, description,
// triggers), listed to the model at start; tier 2 is the SKILL.md body, read
// when a skill is activated; tier 3 is every other file of the skill
// (knowledge YAML, rules/*.md protocol files, tools/tools.yaml), read on
// demand. A core skill is embedded in the binary and always loaded; a
// workspace's skills/core/ overrides it. A Set re-checks file modification
// times at most once per interval and reloads what changed.
package skills

// tools/tools.yaml may give a compute tool a plugin, the program that does
// the computation:
//
//	- name: compute_chart
//	  type: compute
//	  parameters: [{name: birth_date, type: string, required: true}]
//	  plugin:
//	    url: http://127.0.0.1:9000/bazi   # POST JSON, or:
//	    command: [bazi-plugin, --json]    # JSON on stdin, JSON on stdout
//	    timeout: 10s
//
// A command whose program is a relative path with a slash in it
// (plugins/brew-calc) is resolved against the workspace root, and runs there;
// a bare name (bazi-plugin) is looked up in PATH.
//
// A parameter (or a display tool's card prop) may be constrained; the
// constraints are in the function schema the model gets and are checked
// before the tool runs, a refusal going back to the model as the tool's
// error, and vibe check fails on constraints that cannot hold:
//
//	parameters:
//	  - {name: birth, type: string, required: true, format: date-time, not_future: true}
//	  - {name: gender, type: string, enum: [male, female]}
//	  - {name: number, type: integer, minimum: 1, maximum: 9}
//	  - {name: code, type: string, pattern: "^[A-Z]{2}$"}
//	  - {name: zone, type: string, default: Asia/Shanghai}
//
// format is date, date-time, time, email or uri; default fills a missing
// argument.
//
// The runtime validates the inputs against parameters (required fields,
// types and constraints, no undeclared fields), sends {"tool": name, "input": {...}} and
// expects the unified output {"result": ..., "features": ..., "confidence":
// 0.8, "meta": ...} with confidence between 0 and 1. A plugin reports a
// failure with a non-2xx status or a non-zero exit and a message on stderr;
// the message goes back to the model as the tool's error.
//
// Besides compute and display tools, tools.yaml declares random tools
// (draw: items or items_file, count, repeat, reversed), collect tools (form:
// the fields of the form shown), retrieve tools (sources: the theme's
// sources searched) and flow tools (steps: id, prompt, field, next,
// branches); docs/tools.md describes each. [Tool.Issues] says why a
// declared tool could not run; a skill with such a tool (other than a
// compute tool without a plugin, which vibe check fails) does not load.
//
// Skill names follow skill-spec-v5: lower-case letters, digits and single
// hyphens, at most 32 characters; system and admin are reserved and core is
// the core skill's. A skill that breaks the rule is skipped with an error
// naming its directory.
//
// The SKILL.md front matter (skill-spec-v5) may also give:
//
//	display_name: 八字命理 / BaZi     # shown to people (GET /api/skills, the chat page)
//	version: 1.0.0                    # shown in GET /api/skills; vibe integrate records it in meta.json
//	author: Vibe Team
//	requires: [bazi]                  # skills this one builds on
//	tools: [compute_chart, search_knowledge]
//	requires_birth_info: true
//	examples: [伤官见官会怎样？, What does a clash of the day pillar mean?]  # the chat page's welcome
//
// requires is resolved at load: a required skill that is not installed is a
// load error naming both skills (with Options.OnError the skill, and any
// skill requiring it, is skipped and the others load), and activating the
// skill activates the required ones with it ([Set.WithRequired]). tools,
// when given, names the tools the skill uses: each must be a tool of its
// tools/tools.yaml or a core tool ([BuiltinTools]), else the skill fails to
// load; only the listed tools of tools.yaml are offered to the model
// ([Skill.OfferedTools]). requires_birth_info makes the runtime collect the
// user's birth data (a collect_info form of identity.birth_info fields)
// while the profile lacks it.

// knowledge/glossary.yaml, when a skill has one, is its theme's term table:
// each term as the sources write it with the other ways users write it
// (synonyms, variants, its name in another language):
//
//	terms:
//	  - term: 伤官见官
//	    aliases: [hurting officer meets officer]
//	  - term: green tea
//	    aliases: [绿茶]
//
// `vibe integrate` copies knowledge/<theme>/glossary.yaml of the workspace
// there. The router ([Set.Route]) counts its terms among the skill's
// vocabulary, so a question in the user's words or in the other language
// reaches the skill, and get_rules widens a question with the entries it
// names, so an English question finds the rules written in Chinese.
