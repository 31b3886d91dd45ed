package runtime

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pluginTool declares a compute tool run by /bin/sh -c script.
func pluginTool(name, script string, env ...string) string {
	cmd, _ := json.Marshal([]string{"/bin/sh", "-c", script})
	e, _ := json.Marshal(env)
	return fmt.Sprintf("  - name: %s\n    type: compute\n    description: %s\n    plugin: {command: %s, env: %s, timeout: 20s}\n", name, name, cmd, e)
}

// TestCommandPluginSecrets is the regression test of issue 26's leak: a
// skill's command plugin got the server's whole environment (API keys,
// DATABASE_URL, VIBE_API_KEYS) and what it wrote came back to the caller
// of /api/tools/execute, stderr whole and unbounded. A plugin that prints
// its environment, one that prints a secret file on stderr or on stdout,
// and one that writes 200 MB on stderr: the caller receives no secret and a
// short body; the server log keeps the detail; the plugin ran in its
// skill's directory with only PATH and the variable it declared.
func TestCommandPluginSecrets(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY": "sk-openai-secret-26a",
		"VIBE_API_KEYS":  "vibe-key-secret-26b:alice",
		"DATABASE_URL":   "postgres://u:db-secret-26c@127.0.0.1/vibe",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("PLUGIN_TZ_26", "Asia/Shanghai")
	ws := t.TempDir()
	const fileSecret = "file-secret-26d"
	if err := os.WriteFile(filepath.Join(ws, "keys.txt"), []byte(fileSecret+" alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keysTxt := filepath.Join(ws, "keys.txt")
	tools := "tools:\n" +
		pluginTool("show_env", `cat >/dev/null; printf '{"result":{"cwd":"%s","env":"%s"}}' "$(pwd)" "$(env | tr '\n' ';')"`, "PLUGIN_TZ_26", "NOT_SET_26") +
		"  - name: raw_env\n    type: compute\n    description: raw env\n    plugin: {command: [/usr/bin/env]}\n" +
		pluginTool("stderr_leak", "env >&2; cat "+keysTxt+" >&2; exit 3") +
		pluginTool("stdout_leak", "cat "+keysTxt) +
		pluginTool("stderr_flood", "head -c 209715200 /dev/zero | tr '\\0' x >&2; echo '{\"result\":1}'") +
		pluginTool("stdout_flood", "while :; do echo "+fileSecret+"; done")
	root := writeSkills(t, filepath.Join(ws, "skills"), map[string]string{"calc/SKILL.md": calcSkill, "calc/tools/tools.yaml": tools})
	var logBuf syncBuffer
	a := agentOver(t, root, &fakeModel{}, func(c *Config) {
		c.PluginDir = ws
		c.ToolCacheSize = -1
		c.PluginOutputBytes = 1 << 20
		c.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	})
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	exec := func(tool string) (int, string) {
		t.Helper()
		resp := do(t, "POST", ts.URL+"/api/tools/execute", "ka", `{"skill":"calc","tool":"`+tool+`","args":{}}`)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	noSecret := func(tool, body string) {
		t.Helper()
		for k, v := range secrets {
			if strings.Contains(body, v) || strings.Contains(body, k+"=") {
				t.Errorf("%s: the caller received %s: %.300s", tool, k, body)
			}
		}
		if strings.Contains(body, fileSecret) {
			t.Errorf("%s: the caller received the secret file: %.300s", tool, body)
		}
		if len(body) > 1024 {
			t.Errorf("%s: the caller received %d bytes, want a short error", tool, len(body))
		}
	}

	// What the plugin gets: PATH, the declared variable, its skill's directory.
	code, body := exec("show_env")
	if code != 200 {
		t.Fatalf("show_env = %d %s", code, body)
	}
	noSecret("show_env", body)
	var got struct {
		Result struct {
			Result struct{ Cwd, Env string }
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("show_env: %v: %s", err, body)
	}
	realDir, _ := filepath.EvalSymlinks(filepath.Join(root, "calc"))
	if got.Result.Result.Cwd != realDir && got.Result.Result.Cwd != filepath.Join(root, "calc") {
		t.Errorf("plugin ran in %s, want its skill's directory %s", got.Result.Result.Cwd, realDir)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(strings.Trim(got.Result.Result.Env, ";"), ";") {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if vars["PATH"] != DefaultPluginPath || vars["PLUGIN_TZ_26"] != "Asia/Shanghai" {
		t.Errorf("plugin environment %v: want PATH=%s and the declared PLUGIN_TZ_26", vars, DefaultPluginPath)
	}
	for k := range vars {
		switch k {
		case "PATH", "PLUGIN_TZ_26", "PWD", "OLDPWD", "SHLVL", "_":
		default:
			t.Errorf("plugin environment has %s, which it did not declare", k)
		}
	}

	// A plugin that floods stderr but answers is used; its stderr is cut.
	if code, body := exec("stderr_flood"); code != 200 || !strings.Contains(body, `"result":1`) {
		t.Errorf("stderr_flood = %d %.300s, want its result", code, body)
	}
	for _, tool := range []string{"raw_env", "stderr_leak", "stdout_leak", "stdout_flood"} {
		code, body := exec(tool)
		noSecret(tool, body)
		if code != 422 {
			t.Errorf("%s = %d %s, want 422", tool, code, body)
		}
		if !strings.Contains(body, "server log") && !strings.Contains(body, "larger than") {
			t.Errorf("%s: %s does not say where the detail is", tool, body)
		}
	}
	if _, body := exec("stdout_flood"); !strings.Contains(body, "larger than 1048576 bytes (serve.plugin_output_bytes)") {
		t.Errorf("stdout_flood: %s, want the bound named", body)
	}
	// The log keeps what the caller was not shown, the flood cut.
	log := logBuf.String()
	if !strings.Contains(log, fileSecret) {
		t.Errorf("the server log lacks the plugin's stderr: %.500s", log)
	}
	if !strings.Contains(log, "stderr_bytes=209715200") || !strings.Contains(log, "[cut: 65536 of 209715200 bytes kept]") {
		t.Errorf("the server log does not say the 200 MB stderr was cut")
	}
	if len(log) > 1<<20 {
		t.Errorf("the server log got %d bytes", len(log))
	}
}

// TestCommandPluginsRefused: with serve.command_plugins not naming a skill,
// its command plugins do not run, and the error says which setting.
func TestCommandPluginsRefused(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	root := writeSkills(t, "", map[string]string{"calc/SKILL.md": calcSkill,
		"calc/tools/tools.yaml": "tools:\n" + pluginTool("touch", "touch "+marker+"; echo '{\"result\":1}'")})
	for _, tt := range []struct {
		allowed []string
		runs    bool
	}{{nil, true}, {[]string{"*"}, true}, {[]string{"calc"}, true}, {[]string{"other"}, false}, {[]string{}, false}} {
		_ = os.Remove(marker)
		a := agentOver(t, root, &fakeModel{}, func(c *Config) { c.CommandPluginSkills = tt.allowed; c.ToolCacheSize = -1 })
		_, err := a.ExecuteTool(t.Context(), "u", "calc", "touch", nil, nil)
		_, statErr := os.Stat(marker)
		if ran := statErr == nil; ran != tt.runs || (err == nil) != tt.runs {
			t.Errorf("allowed %v: ran %v, err %v; want ran %v", tt.allowed, ran, err, tt.runs)
		}
		if !tt.runs && (err == nil || !strings.Contains(err.Error(), "serve.command_plugins")) {
			t.Errorf("allowed %v: err %v, want it to name serve.command_plugins", tt.allowed, err)
		}
	}
}

func TestPluginEnv(t *testing.T) {
	env := map[string]string{"PATH": "/opt/bin", "TZ": "UTC", "SECRET": "x"}
	get := func(k string) string { return env[k] }
	for _, tt := range []struct {
		decl []string
		want string
	}{
		{nil, "PATH=" + DefaultPluginPath},
		{[]string{"TZ"}, "TZ=UTC PATH=" + DefaultPluginPath},
		{[]string{"PATH", "TZ", "UNSET"}, "PATH=/opt/bin TZ=UTC"},
	} {
		got, err := pluginEnv(tt.decl, get)
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("pluginEnv(%v) = %v, %v; want %s", tt.decl, got, err, tt.want)
		}
	}
	if _, err := pluginEnv([]string{"A=B"}, get); err == nil || !strings.Contains(err.Error(), `plugin.env "A=B"`) {
		t.Errorf("A=B: %v", err)
	}
}
