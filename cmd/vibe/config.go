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
Each value is followed by where it came from: "default", the vibe.yaml line
that set it, or the environment variable. (The --store and --embedder flags of
ingest, search and build override store.driver and embedding.provider for
that one command.) Values outside a key's allowed set are errors naming the
key, where the value came from and what is allowed, for every command.

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
			if c.Search.APIKey != "" {
				c.Search.APIKey = "<redacted>"
			}
			if c.Store.DatabaseURL != "" {
				c.Store.DatabaseURL = redactURL(c.Store.DatabaseURL)
			}
			var doc yaml.Node
			if err := doc.Encode(c); err != nil {
				return err
			}
			if asJSON {
				// Through YAML, so the keys are vibe.yaml's (llm.api_key),
				// not the Go field names.
				var m map[string]any
				if err := doc.Decode(&m); err != nil {
					return err
				}
				return printJSON(a.io.Out, m)
			}
			annotateSources(&doc, nil, a.cfgSources)
			out, err := yaml.Marshal(&doc)
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

// annotateSources puts where each value came from in a comment after it.
func annotateSources(n *yaml.Node, prefix []string, src workspace.Sources) {
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			annotateSources(c, prefix, src)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(append([]string(nil), prefix...), k.Value)
		key := strings.Join(p, ".")
		if v.Kind == yaml.MappingNode && key != "llm.prices" {
			annotateSources(v, p, src)
			continue
		}
		k.LineComment = src.Of(key)
	}
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
