// Package skills loads the skills the agent runtime serves, with progressive
// disclosure: tier 1 is every skill's front matter (name, description,
// triggers), listed to the model at start; tier 2 is the SKILL.md body, read
// when a skill is activated; tier 3 is every other file of the skill
// (knowledge YAML, rules/*.md protocol files, tools/tools.yaml), read on
// demand. A core skill is embedded in the binary and always loaded; a
// workspace's skills/core/ overrides it. A Set re-checks file modification
// times at most once per interval and reloads what changed.
package skills
