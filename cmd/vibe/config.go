package main

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/workspace"
)

func newConfigCmd(a *app) *cobra.Command {
	var asJSON, keys bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration (vibe.yaml + environment)",
		Long: `Show the configuration vibe would use in this workspace: the defaults,
overridden by vibe.yaml, overridden by the environment. Secrets are redacted.

Every key can be set in vibe.yaml or with an environment variable named
VIBE_<SECTION>_<KEY> (e.g. VIBE_LLM_MODEL, VIBE_CHUNK_MAX_TOKENS). The standard
OPENAI_API_KEY, OPENAI_BASE_URL and DATABASE_URL are honoured too; DATABASE_URL
selects the PostgreSQL store unless VIBE_STORE_DRIVER says otherwise.`,
		Example: `  vibe config
  vibe config --keys          # every key with its environment variable
  VIBE_LLM_MODEL=qwen2.5 vibe config --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if keys {
				for _, k := range configKeys(reflect.TypeOf(workspace.Config{}), nil) {
					fmt.Fprintf(a.io.Out, "%-36s %s\n", strings.Join(k, "."), workspace.EnvName(k...))
				}
				return nil
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			c := *cfg
			if c.LLM.APIKey != "" {
				c.LLM.APIKey = "<redacted>"
			}
			if c.Store.DatabaseURL != "" {
				c.Store.DatabaseURL = redactURL(c.Store.DatabaseURL)
			}
			if asJSON {
				return printJSON(a.io.Out, c)
			}
			out, err := yaml.Marshal(c)
			if err != nil {
				return err
			}
			_, err = a.io.Out.Write(out)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&keys, "keys", false, "list every key and its environment variable")
	return cmd
}

func configKeys(t reflect.Type, path []string) [][]string {
	var out [][]string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		p := append(append([]string(nil), path...), tag)
		if f.Type.Kind() == reflect.Struct && f.Type.String() != "time.Duration" {
			out = append(out, configKeys(f.Type, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// redactURL hides the password of a connection URL.
func redactURL(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if i := strings.Index(cred, ":"); i >= 0 {
		return u[:scheme+3] + cred[:i] + ":<redacted>" + u[at:]
	}
	return u
}
