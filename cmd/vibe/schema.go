package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/knowledge/schema"
)

func newSchemaCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "schema <sop|patterns|rules|tools|eval>",
		Short: "Print the JSON Schema of a knowledge file, tools.yaml or eval.yaml",
		Long: `Print the JSON Schema (draft 2020-12) that sop.yaml, patterns.yaml,
rules.yaml, tools.yaml or a theme's eval.yaml (vibe eval) must satisfy, for editors and CI validating hand
edits. ` + "`vibe check`" + ` validates against the same schemas.`,
		Example:   "  vibe schema rules > rules.schema.json",
		Args:      cobra.ExactArgs(1),
		ValidArgs: schema.Kinds(),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := schema.JSON(args[0])
			if err != nil {
				return flagErrorf("unknown schema %q: use one of %s", args[0], strings.Join(schema.Kinds(), ", "))
			}
			_, err = fmt.Fprint(a.io.Out, string(b))
			return err
		},
	}
}
