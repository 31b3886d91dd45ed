package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/vibelife/vibe/internal/iostreams"
)

// TestOTLPEndpointConfiguration checks where vibe serve sends traces: nowhere
// by default, to serve.otlp_endpoint, else to the standard OTEL_* variables,
// and not at all when the SDK is disabled.
func TestOTLPEndpointConfiguration(t *testing.T) {
	tests := []struct {
		key     string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{want: ""},
		{key: "http://collector:4318", want: "http://collector:4318/v1/traces"},
		{key: "https://collector:4318/custom/path", want: "https://collector:4318/custom/path"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318"}, want: "http://otel:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318/base/"}, want: "http://otel:4318/base/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/x"}, want: "http://t:4318/x"},
		{key: "http://collector:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318"}, want: "http://collector:4318/v1/traces"},
		{key: "http://collector:4318", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: ""},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318", "OTEL_TRACES_EXPORTER": "none"}, want: ""},
		{key: "collector:4318", wantErr: true},
	}
	for _, tt := range tests {
		a := &app{getenv: func(k string) string { return tt.env[k] }}
		got, err := a.otlpTracesURL(tt.key)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("key %q env %v: %q, %v; want %q (error %v)", tt.key, tt.env, got, err, tt.want, tt.wantErr)
		}
	}

	// Unconfigured: no provider, so the runtime records nothing.
	ios, _, _, _ := iostreams.Test()
	a := &app{io: ios, getenv: func(string) string { return "" }}
	tp, stop, err := a.newTracerProvider(context.Background(), "")
	if err != nil || tp != nil {
		t.Fatalf("no endpoint: provider %v, %v; want none", tp, err)
	}
	stop()

	// Configured: a span reaches the collector once the provider stops.
	var posts atomic.Int64
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			posts.Add(1)
		}
	}))
	defer col.Close()
	tp, stop, err = a.newTracerProvider(context.Background(), col.URL)
	if err != nil || tp == nil {
		t.Fatalf("endpoint %s: provider %v, %v", col.URL, tp, err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "probe")
	span.End()
	stop()
	if posts.Load() == 0 {
		t.Fatal("the span was not exported to serve.otlp_endpoint")
	}
}
