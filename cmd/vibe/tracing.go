package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otlpTracesURL returns where traces go: serve.otlp_endpoint, else the
// standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is) or
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL: /v1/traces is appended); "" when
// none is set, or OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none say
// no. The key's value is a base URL too unless it has a path.
func (a *app) otlpTracesURL(key string) (string, error) {
	if strings.EqualFold(a.getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(a.getenv("OTEL_TRACES_EXPORTER"), "none") {
		return "", nil
	}
	name, raw, base := "serve.otlp_endpoint", key, true
	switch {
	case key != "":
	case a.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		name, raw, base = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", a.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), false
	case a.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		name, raw, base = "OTEL_EXPORTER_OTLP_ENDPOINT", a.getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), false
	default:
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", withHint(fmt.Errorf("%s %q is not an http(s) URL", name, raw), "give the OTLP/HTTP endpoint of the collector, e.g. http://localhost:4318")
	}
	switch {
	case name == "OTEL_EXPORTER_OTLP_ENDPOINT":
		u.Path = strings.TrimRight(u.Path, "/") + "/v1/traces"
	case base && (u.Path == "" || u.Path == "/"):
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// newTracerProvider returns the tracer provider of vibe serve: spans batched
// to the OTLP/HTTP endpoint otlpTracesURL names, or nil (no tracing: nothing
// is sent anywhere) when none is configured. shutdown flushes the spans
// still buffered.
func (a *app) newTracerProvider(ctx context.Context, key string) (tp trace.TracerProvider, shutdown func(), err error) {
	endpoint, err := a.otlpTracesURL(key)
	if err != nil || endpoint == "" {
		return nil, func() {}, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", endpoint, err)
	}
	service := a.getenv("OTEL_SERVICE_NAME")
	if service == "" {
		service = "vibe"
	}
	res := resource.NewSchemaless(attribute.String("service.name", service))
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	fmt.Fprintf(a.io.ErrOut, "vibe serve: traces to %s\n", endpoint)
	return p, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(sctx)
	}, nil
}
