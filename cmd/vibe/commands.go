package main

import "github.com/spf13/cobra"

// commands lists every subcommand. Each lives in its own file as
// new<Verb>Cmd(a *app).
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newConfigCmd(a),
		newServeCmd(a),
		newChatCmd(a),
		newBuildCmd(a),
		newCurateCmd(a),
		newSourcesCmd(a),
		newConvertCmd(a),
		newExtractCmd(a),
		newSchemaCmd(a),
		newIntegrateCmd(a),
		newCheckCmd(a),
		newEvalCmd(a),
		newDiffCmd(a),
		newIngestCmd(a),
		newSearchCmd(a),
	}
}
