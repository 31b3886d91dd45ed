package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the content of vibe.yaml. Every field has a default (see
// [DefaultConfig]); a missing vibe.yaml is the same as an empty one.
//
// Each section belongs to one stage; the stage's package turns it into its own
// Options, so pipeline packages never import workspace.
type Config struct {
	Store     StoreConfig     `yaml:"store"`
	Embedding EmbeddingConfig `yaml:"embedding"`
	LLM       LLMConfig       `yaml:"llm"`
	Curate    CurateConfig    `yaml:"curate"`
	Convert   ConvertConfig   `yaml:"convert"`
	Chunk     ChunkConfig     `yaml:"chunk"`
	Extract   ExtractConfig   `yaml:"extract"`
	Check     CheckConfig     `yaml:"check"`
	Serve     ServeConfig     `yaml:"serve"`
	Eval      EvalConfig      `yaml:"eval"`
	Search    SearchConfig    `yaml:"search"`
	Glossary  GlossaryConfig  `yaml:"glossary"`
}

// GlossaryConfig tunes the glossary `vibe integrate` builds
// (docs/glossary.md).
type GlossaryConfig struct {
	// Dictionary is a Chinese–English dictionary in the CC-CEDICT format
	// (relative to the workspace root), the user's own: offline, the mined
	// terms get its English renderings and the glossary its characters'
	// words. Empty: none of the user's; the characters' words then come
	// from vibe's built-in table (the Unicode Han Database's English
	// definitions), which also fills the characters the user's lacks.
	// NoDictionary ("none") turns the built-in table off too.
	Dictionary string `yaml:"dictionary"`
}

// NoDictionary as glossary.dictionary turns off the built-in table of the
// characters' English words as well as naming no dictionary.
const NoDictionary = "none"

// SearchConfig selects the web search curate researches with
// (`vibe curate --suggest` finds copies of accepted works with it,
// `vibe curate --research` gathers what it finds).
type SearchConfig struct {
	// Provider is "searxng" (a SearXNG instance's JSON API, URL) or
	// "brave" (the Brave Search API, a key); empty means none.
	Provider string `yaml:"provider"`
	// URL is the SearXNG instance, or another endpoint for Brave.
	URL string `yaml:"url"`
	// APIKey is best left to BRAVE_API_KEY (or VIBE_SEARCH_API_KEY)
	// rather than written in vibe.yaml.
	APIKey string `yaml:"api_key"`
	// Results is how many results of a search are gathered (default 5).
	Results int `yaml:"results"`
	// Recent keeps --research to pages of the last day, week, month or
	// year (default year); "any" lifts it.
	Recent  string        `yaml:"recent"`
	Timeout time.Duration `yaml:"timeout"`
}

// StoreConfig selects the knowledge store.
type StoreConfig struct {
	// Driver is "sqlite" (embedded, default) or "postgres".
	Driver string `yaml:"driver"`
	// Path is the embedded database file, relative to the workspace.
	Path string `yaml:"path"`
	// DatabaseURL is the PostgreSQL connection string (DATABASE_URL).
	DatabaseURL string `yaml:"database_url"`
}

// EmbeddingConfig selects the embedder.
type EmbeddingConfig struct {
	// Provider is "local" (deterministic, offline) or "openai".
	Provider    string `yaml:"provider"`
	Model       string `yaml:"model"`
	Dimensions  int    `yaml:"dimensions"`
	BatchSize   int    `yaml:"batch_size"`
	Concurrency int    `yaml:"concurrency"`
}

// LLMConfig configures the OpenAI-compatible endpoint used by extract, check
// --judge, integrate and serve.
type LLMConfig struct {
	// Provider is "offline" (no model: heuristic extraction, retrieval-only
	// chat) or "openai" (any OpenAI-compatible endpoint). Empty means openai
	// when an API key or base URL is configured, offline otherwise.
	Provider string `yaml:"provider"`
	BaseURL  string `yaml:"base_url"`
	// APIKey is best left to OPENAI_API_KEY rather than written in vibe.yaml.
	APIKey         string        `yaml:"api_key"`
	Model          string        `yaml:"model"`
	ChatModel      string        `yaml:"chat_model"`
	JudgeModel     string        `yaml:"judge_model"`
	MaxConcurrency int           `yaml:"max_concurrency"`
	Timeout        time.Duration `yaml:"timeout"`
	MaxRetries     int           `yaml:"max_retries"`
	// Budget is the most a build may spend, in the currency of Prices; 0 means
	// no limit.
	Budget float64 `yaml:"budget"`
	// Prices per model, per million tokens.
	Prices map[string]Price `yaml:"prices"`
}

// Price is what a model costs per million tokens.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok"`
}

// CurateConfig bounds what curate gathers.
type CurateConfig struct {
	MaxDownloadBytes int64         `yaml:"max_download_bytes"`
	DownloadTimeout  time.Duration `yaml:"download_timeout"`
	MaxRedirects     int           `yaml:"max_redirects"`
	MinChars         int           `yaml:"min_chars"`
	MaxGarbledRatio  float64       `yaml:"max_garbled_ratio"`
	// MaxRepoBytes bounds a git source: what one fetch may transfer and the
	// size of the documents it selects; MaxRepoFiles how many it selects;
	// GitTimeout how long one fetch may take.
	MaxRepoBytes int64         `yaml:"max_repo_bytes"`
	MaxRepoFiles int           `yaml:"max_repo_files"`
	GitTimeout   time.Duration `yaml:"git_timeout"`
	// Judge has the configured model grade each kept source's credibility
	// too (one cached request per source); off, or offline, the grade
	// rests on the measured findings alone.
	Judge bool `yaml:"judge"`
}

// ConvertConfig bounds conversion.
type ConvertConfig struct {
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// PDFEngine is "auto", "pdfium" or "ledongthuc".
	PDFEngine string `yaml:"pdf_engine"`
	Workers   int    `yaml:"workers"`
	// Timeout bounds the conversion of one file; MaxMemoryBytes how much
	// one conversion may take (a file past either fails, the others go on).
	Timeout        time.Duration `yaml:"timeout"`
	MaxMemoryBytes int64         `yaml:"max_memory_bytes"`
	// PDFPageInstances is how many pdfium instances the pages of one PDF
	// may be read on at once, when they are idle (1: in order on one).
	PDFPageInstances int `yaml:"pdf_page_instances"`
}

// ChunkConfig sets the chunk token budget.
type ChunkConfig struct {
	MaxTokens int `yaml:"max_tokens"`
	Overlap   int `yaml:"overlap"`
	// Encoding is "cl100k_base" or "o200k_base".
	Encoding string `yaml:"encoding"`
}

// ExtractConfig tunes knowledge extraction.
type ExtractConfig struct {
	// Extractor is "auto", "llm" or "offline".
	Extractor string `yaml:"extractor"`
	// Similarity is the cosine similarity of the configured embedder at
	// which the LLM reduce groups candidates as near-duplicates for the
	// model to merge (0 to 1).
	Similarity float64 `yaml:"similarity"`
}

// CheckConfig holds the thresholds of vibe check.
type CheckConfig struct {
	MinLexicalSupport   float64 `yaml:"min_lexical_support"`
	MinEmbeddingSupport float64 `yaml:"min_embedding_support"`
	DuplicateThreshold  float64 `yaml:"duplicate_threshold"`
	MaxSkillTokens      int     `yaml:"max_skill_tokens"`
	MaxMetadataTokens   int     `yaml:"max_metadata_tokens"`
	// MinSectionCoverage is the share of the sections stating rules (in
	// percent) that rules must cite before check warns that whole parts of
	// the sources have no rule; 0 turns the warning off.
	MinSectionCoverage float64 `yaml:"min_section_coverage"`
}

// ServeConfig configures vibe serve.
type ServeConfig struct {
	// WebSearch offers the agent a web_search tool (the search: section's
	// provider) for questions the skill's knowledge has nothing on; its
	// results are marked outside the skill. Off by default.
	WebSearch      bool   `yaml:"web_search"`
	Addr           string `yaml:"addr"`
	MaxSteps       int    `yaml:"max_steps"`
	MaxInputChars  int    `yaml:"max_input_chars"`
	MaxBodyBytes   int64  `yaml:"max_body_bytes"`
	RequestsPerMin int    `yaml:"requests_per_minute"`
	// TokensPerDay caps each user's model tokens (prompt + completion) a
	// UTC day; 0 (the default) turns the cap off.
	TokensPerDay    int64         `yaml:"tokens_per_day"`
	TurnTimeout     time.Duration `yaml:"turn_timeout"`
	SummaryEvery    int           `yaml:"summary_every"`
	ToolTimeout     time.Duration `yaml:"tool_timeout"`
	HistoryMessages int           `yaml:"history_messages"`
	// ToolCache is how many compute-tool results are kept (0: 256;
	// negative: none).
	ToolCache int `yaml:"tool_cache"`
	// CORSOrigins are the origins (https://app.example.org) whose pages may
	// call the API from a browser; empty keeps CORS off.
	CORSOrigins []string `yaml:"cors_origins"`
	// MetricsAddr is the HOST:PORT of the Prometheus /metrics listener,
	// apart from the API's ("" keeps it off; docs/operations.md).
	MetricsAddr string `yaml:"metrics_addr"`
	// LogFormat is the request log's format: text or json; LogContent
	// adds each turn's message and answer to it (off by default).
	LogFormat  string `yaml:"log_format"`
	LogContent bool   `yaml:"log_content"`
	// Judge is when an answer is judged against its sources before it is
	// streamed (docs/agent.md): auto (the default: skills whose rules
	// carry grave verdicts), on, off.
	Judge string `yaml:"judge"`
	// OTLPEndpoint is the OTLP/HTTP endpoint traces are sent to
	// (http://collector:4318); "" leaves tracing off unless
	// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// PluginOutputBytes bounds what a compute tool's plugin may write on
	// stdout and on stderr, each, and an HTTP plugin's response (default
	// 4 MiB); more is cut, and the call fails saying so.
	PluginOutputBytes int64 `yaml:"plugin_output_bytes"`
	// CommandPlugins names the skills whose command plugins (programs run
	// on this machine) may run: "*" (the default) is every installed
	// skill; list your own skills to refuse the command plugins of skills
	// from elsewhere; [] refuses them all. HTTP plugins are not affected.
	// docs/tools.md, "Plugins and trust".
	CommandPlugins []string `yaml:"command_plugins"`
	// TrustedProxies are the addresses (CIDRs such as 10.0.0.0/8, or
	// single IPs) of the load balancers in front of the server: only from
	// them is X-Forwarded-For believed for the client's address (the
	// failed-login limit keys on it).
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// EvalConfig configures vibe eval: the k of rule hit@k and passage
// recall@k, and the least value of each measure a run must reach (a theme's
// eval.yaml may override them).
type EvalConfig struct {
	RulesK     int            `yaml:"rules_k"`
	PassagesK  int            `yaml:"passages_k"`
	Thresholds EvalThresholds `yaml:"thresholds"`
}

// EvalThresholds are fractions between 0 and 1.
type EvalThresholds struct {
	Routing       float64 `yaml:"routing"`
	RuleHit       float64 `yaml:"rule_hit"`
	PassageRecall float64 `yaml:"passage_recall"`
	Tools         float64 `yaml:"tools"`
	Contains      float64 `yaml:"contains"`
	Faithfulness  float64 `yaml:"faithfulness"`
	FactCoverage  float64 `yaml:"fact_coverage"`
}

// DefaultConfig returns the configuration used when vibe.yaml says nothing.
func DefaultConfig() Config {
	return Config{
		Store:     StoreConfig{Driver: "sqlite", Path: ".vibe/vibe.db"},
		Embedding: EmbeddingConfig{Provider: "local", Model: "local-ngram-v2", Dimensions: 1024, BatchSize: 64, Concurrency: 4},
		LLM: LLMConfig{
			Model:          "gpt-4o-mini",
			ChatModel:      "gpt-4o-mini",
			JudgeModel:     "gpt-4o-mini",
			MaxConcurrency: 4,
			Timeout:        120 * time.Second,
			MaxRetries:     4,
		},
		Curate: CurateConfig{
			MaxDownloadBytes: 100 << 20,
			DownloadTimeout:  60 * time.Second,
			MaxRedirects:     5,
			MinChars:         200,
			MaxGarbledRatio:  0.2,
			MaxRepoBytes:     500 << 20,
			MaxRepoFiles:     2000,
			GitTimeout:       5 * time.Minute,
		},
		Search:  SearchConfig{Results: 5, Recent: "year", Timeout: 30 * time.Second},
		Convert: ConvertConfig{MaxFileBytes: 512 << 20, PDFEngine: "auto", Workers: 2, Timeout: 2 * time.Minute, MaxMemoryBytes: 2 << 30, PDFPageInstances: 1},
		Chunk:   ChunkConfig{MaxTokens: 512, Overlap: 64, Encoding: "cl100k_base"},
		Extract: ExtractConfig{Extractor: "auto", Similarity: 0.75},
		Check: CheckConfig{
			MinLexicalSupport:   0.3,
			MinEmbeddingSupport: 0.25,
			DuplicateThreshold:  0.9,
			MaxSkillTokens:      3000,
			MaxMetadataTokens:   80,
			MinSectionCoverage:  20,
		},
		Serve: ServeConfig{
			Addr:              "127.0.0.1:8080",
			LogFormat:         "text",
			Judge:             "auto",
			MaxSteps:          8,
			MaxInputChars:     8000,
			MaxBodyBytes:      1 << 20,
			RequestsPerMin:    60,
			TurnTimeout:       120 * time.Second,
			SummaryEvery:      10,
			ToolTimeout:       20 * time.Second,
			HistoryMessages:   10,
			PluginOutputBytes: 4 << 20,
			CommandPlugins:    []string{"*"},
		},
		// Deterministic measures gate at 100% (any failed case fails the
		// run); judged ones leave room for judgement.
		Eval: EvalConfig{RulesK: 3, PassagesK: 5, Thresholds: EvalThresholds{
			Routing: 1, RuleHit: 1, PassageRecall: 1, Tools: 1, Contains: 1, Faithfulness: 0.8, FactCoverage: 0.8}},
	}
}

// LLMEnabled reports whether an LLM endpoint is configured and not switched
// off with provider "offline".
func (c *Config) LLMEnabled() bool {
	switch c.LLM.Provider {
	case "offline":
		return false
	case "openai":
		return true
	}
	return c.LLM.APIKey != "" || c.LLM.BaseURL != ""
}

// LoadConfig reads path (a missing file yields the defaults), then applies the
// environment through getenv (os.Getenv in production). Unknown keys in the
// file are errors that name the line, so a typo never silently does nothing;
// so are values outside a key's allowed set (see [Config.Validate]).
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	cfg, _, err := LoadConfigSources(path, getenv)
	return cfg, err
}

// Sources records where each configuration value came from, by dotted YAML
// key ("llm.provider"). A key that is absent kept its default.
type Sources map[string]string

// SourceDefault is the origin of a value nobody set.
const SourceDefault = "default"

// Of returns where the value of key came from: SourceDefault, "<file>:<line>"
// or "env <VARIABLE>".
func (s Sources) Of(key string) string {
	if o, ok := s[key]; ok {
		return o
	}
	return SourceDefault
}

// LoadConfigSources is [LoadConfig] that also reports where each value came
// from.
func LoadConfigSources(path string, getenv func(string) string) (Config, Sources, error) {
	cfg := DefaultConfig()
	src := Sources{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return cfg, src, fmt.Errorf("read %s: %w", path, err)
	default:
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			var doc yaml.Node
			if yaml.Unmarshal(data, &doc) == nil {
				if e := explainConfig(path, &doc); e != nil {
					return cfg, src, e
				}
			}
			return cfg, src, fmt.Errorf("%s: %s (`vibe config --keys` lists every key)", path, cleanYAMLError(err))
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) == 1 {
			fileSources(doc.Content[0], nil, path, src)
		}
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if err := applyEnv(&cfg, getenv, src); err != nil {
		return cfg, src, err
	}
	if err := cfg.Validate(src); err != nil {
		return cfg, src, err
	}
	return cfg, src, nil
}

// fileSources records path:line for every leaf key of the mapping n.
func fileSources(n *yaml.Node, prefix []string, path string, src Sources) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(append([]string(nil), prefix...), k.Value)
		key := strings.Join(p, ".")
		if v.Kind == yaml.MappingNode && key != "llm.prices" {
			fileSources(v, p, path, src)
			continue
		}
		src[key] = fmt.Sprintf("%s:%d", path, k.Line)
	}
}

// allowedValues lists the keys whose value is one of a fixed set.
var allowedValues = []struct {
	key     string
	get     func(*Config) string
	allowed []string
}{
	{"store.driver", func(c *Config) string { return c.Store.Driver }, []string{"sqlite", "postgres"}},
	{"embedding.provider", func(c *Config) string { return c.Embedding.Provider }, []string{"local", "openai"}},
	{"llm.provider", func(c *Config) string { return c.LLM.Provider }, []string{"", "offline", "openai"}},
	{"convert.pdf_engine", func(c *Config) string { return c.Convert.PDFEngine }, []string{"auto", "pdfium", "ledongthuc"}},
	{"chunk.encoding", func(c *Config) string { return c.Chunk.Encoding }, []string{"cl100k_base", "o200k_base"}},
	{"extract.extractor", func(c *Config) string { return c.Extract.Extractor }, []string{"auto", "llm", "offline"}},
	{"serve.log_format", func(c *Config) string { return c.Serve.LogFormat }, []string{"text", "json"}},
	{"serve.judge", func(c *Config) string { return c.Serve.Judge }, []string{"auto", "on", "off"}},
	{"search.provider", func(c *Config) string { return c.Search.Provider }, []string{"", "searxng", "brave"}},
	{"search.recent", func(c *Config) string { return c.Search.Recent }, []string{"day", "week", "month", "year", "any"}},
}

// Validate checks the values that must be one of a fixed set. The error names
// the key, where its value came from (src may be nil) and the values allowed.
func (c *Config) Validate(src Sources) error {
	var errs []error
	for _, a := range allowedValues {
		v := a.get(c)
		if slices.Contains(a.allowed, v) {
			continue
		}
		var shown []string
		for _, x := range a.allowed {
			if x == "" {
				x = `"" (unset)`
			}
			shown = append(shown, x)
		}
		errs = append(errs, fmt.Errorf("%s: %s %q is not allowed; use one of %s", src.Of(a.key), a.key, v, strings.Join(shown, ", ")))
	}
	for _, n := range c.Serve.CommandPlugins {
		if n != "*" && !skillNameRe.MatchString(n) {
			errs = append(errs, fmt.Errorf("%s: serve.command_plugins %q is not a skill name; list skill names, or \"*\" for every skill", src.Of("serve.command_plugins"), n))
		}
	}
	for _, p := range c.Serve.TrustedProxies {
		if _, err := ParseCIDROrIP(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: serve.trusted_proxies %q: %v; give CIDRs such as 10.0.0.0/8 or single addresses", src.Of("serve.trusted_proxies"), p, err))
		}
	}
	if n := c.Serve.PluginOutputBytes; n < 0 {
		errs = append(errs, fmt.Errorf("%s: serve.plugin_output_bytes %d is negative; give a size in bytes such as 4194304", src.Of("serve.plugin_output_bytes"), n))
	}
	if n := c.Search.Results; n < 1 || n > 20 {
		errs = append(errs, fmt.Errorf("%s: search.results %d: give how many results of a search to gather, 1 to 20", src.Of("search.results"), n))
	}
	if n := c.Serve.TokensPerDay; n < 0 {
		errs = append(errs, fmt.Errorf("%s: serve.tokens_per_day %d is negative; give the tokens a user may spend a UTC day, or 0 for no limit", src.Of("serve.tokens_per_day"), n))
	}
	return errors.Join(errs...)
}

var skillNameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ParseCIDROrIP parses a CIDR (10.0.0.0/8) or a single address (a /32 or
// /128).
func ParseCIDROrIP(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, errors.New("not a CIDR")
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, errors.New("not an IP address or CIDR")
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// EnvName returns the environment variable that overrides the config key at
// the given yaml path, e.g. EnvName("llm", "model") == "VIBE_LLM_MODEL".
func EnvName(path ...string) string {
	return "VIBE_" + strings.ToUpper(strings.Join(path, "_"))
}

func applyEnv(cfg *Config, getenv func(string) string, src Sources) error {
	// Standard variables first, so VIBE_* can still override them.
	if v := getenv("OPENAI_API_KEY"); v != "" {
		cfg.LLM.APIKey = v
		src["llm.api_key"] = "env OPENAI_API_KEY"
	}
	if v := getenv("OPENAI_BASE_URL"); v != "" {
		cfg.LLM.BaseURL = v
		src["llm.base_url"] = "env OPENAI_BASE_URL"
	}
	if v := getenv("BRAVE_API_KEY"); v != "" {
		cfg.Search.APIKey = v
		src["search.api_key"] = "env BRAVE_API_KEY"
	}
	if v := getenv("DATABASE_URL"); v != "" {
		cfg.Store.DatabaseURL = v
		src["store.database_url"] = "env DATABASE_URL"
		if getenv(EnvName("store", "driver")) == "" {
			cfg.Store.Driver = "postgres"
			src["store.driver"] = "env DATABASE_URL"
		}
	}
	return walkEnv(reflect.ValueOf(cfg).Elem(), nil, getenv, src)
}

func walkEnv(v reflect.Value, path []string, getenv func(string) string, src Sources) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		p := append(append([]string(nil), path...), tag)
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct {
			if err := walkEnv(fv, p, getenv, src); err != nil {
				return err
			}
			continue
		}
		name := EnvName(p...)
		raw := getenv(name)
		if raw == "" {
			continue
		}
		if err := setFromString(fv, raw); err != nil {
			return fmt.Errorf("environment variable %s=%q: %w", name, raw, err)
		}
		src[strings.Join(p, ".")] = "env " + name
	}
	return nil
}

var durationType = reflect.TypeOf(time.Duration(0))

func setFromString(fv reflect.Value, raw string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("want a duration such as 30s or 2m")
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		fv.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("want a number")
		}
		fv.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		fv.SetBool(b)
	case reflect.Slice:
		if fv.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("cannot be set from the environment")
		}
		parts := strings.Split(raw, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		fv.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}
