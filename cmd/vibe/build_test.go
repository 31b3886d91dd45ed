package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
)

func TestSelectStages(t *testing.T) {
	all := []buildStage{{name: "a"}, {name: "b"}, {name: "c"}}
	names := func(ss []buildStage) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.name)
		}
		return strings.Join(n, ",")
	}
	tests := []struct {
		from, until, want string
		wantErr           bool
	}{
		{"", "", "a,b,c", false},
		{"b", "", "b,c", false},
		{"", "b", "a,b", false},
		{"b", "b", "b", false},
		{"c", "a", "", true},
		{"x", "", "", true},
	}
	for _, tt := range tests {
		got, err := selectStages(all, "demo", tt.from, tt.until)
		if (err != nil) != tt.wantErr {
			t.Fatalf("from=%q until=%q: err=%v", tt.from, tt.until, err)
		}
		if err == nil && names(got) != tt.want {
			t.Errorf("from=%q until=%q: got %s, want %s", tt.from, tt.until, names(got), tt.want)
		}
	}
}

func TestRunBuildGoesOnAfterPartialFailureAndStopsOnError(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(string) string { return "" }, now: time.Now}
	if err := a.setupLogger(); err != nil {
		t.Fatal(err)
	}
	var ran []string
	stage := func(name string, err error) buildStage {
		return buildStage{name, func(ctx context.Context, theme string) error {
			ran = append(ran, name)
			return err
		}}
	}
	err := a.runBuild(context.Background(), "demo", []buildStage{
		stage("curate", nil),
		stage("convert", withExit(exitFailure, errors.New("1 of 3 files failed"))),
		stage("ingest", nil),
	})
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.code != exitFailure {
		t.Fatalf("want exit status 1 after a partial failure, got %v", err)
	}
	if strings.Join(ran, ",") != "curate,convert,ingest" {
		t.Fatalf("stages run: %v", ran)
	}
	if !strings.Contains(errOut.String(), "1 of 3 files failed") {
		t.Fatalf("partial failure not reported: %q", errOut.String())
	}

	ran = nil
	err = a.runBuild(context.Background(), "demo", []buildStage{
		stage("curate", errors.New("disk full")),
		stage("convert", nil),
	})
	if err == nil || !strings.Contains(err.Error(), "stage curate") || len(ran) != 1 {
		t.Fatalf("a hard error must stop the build: err=%v ran=%v", err, ran)
	}
}
