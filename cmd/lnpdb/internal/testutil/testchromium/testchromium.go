// Package testchromium starts Debian's chromium, headless, for a test that
// drives the web pages as a browser does.
package testchromium

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is Debian's chromium.
const Path = "/usr/bin/chromium"

// Need skips t, naming the package it needs, when chromium is absent.
func Need(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skip("needs a browser: Debian's chromium package (" + Path + ")")
	}
}

// Start starts a headless chromium and returns a tab of it, and what stops
// it.
func Start() (context.Context, func(), error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Path), chromedp.WindowSize(1200, 900))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	stop := func() { cancel(); cancelAlloc() }
	if err := chromedp.Do(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return ctx, stop, nil
}

// WatchCSP calls refused, until the tab of ctx closes, with each Content
// Security Policy refusal its pages' consoles report.
func WatchCSP(ctx context.Context, refused func(string)) {
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, "Content Security Policy") {
				refused(m.Text)
			}
		}
	}()
}

// Tab starts a headless chromium for t and returns a tab of it, with the
// Content Security Policy refusals its pages' consoles reported so far;
// both end with t. Without chromium, t is skipped with the package it
// needs.
func Tab(t testing.TB) (context.Context, func() []string) {
	t.Helper()
	Need(t)
	ctx, stop, err := Start()
	if err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	t.Cleanup(stop)
	var mu sync.Mutex
	var csp []string
	WatchCSP(ctx, func(text string) {
		mu.Lock()
		csp = append(csp, text)
		mu.Unlock()
	})
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), csp...)
	}
}
